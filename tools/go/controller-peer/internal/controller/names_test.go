package controller

import "testing"

// Vectors from api/child-names.ts (workloadName, serviceName, labelValue, governingServiceName): the peer names
// children as the TypeScript operator does.
func TestNamesMatchTheTypeScriptOperator(t *testing.T) {
	cases := [][5]string{
		{"app-00001", "app-00001", "app-00001", "app-00001", "app-00001-pods"},
		{"1st-app", "1st-app", "x-1st-app-43857011", "1st-app", "x-1st-app-pods-178e8d3f"},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-11ee3912", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-4224539a"},
		{"My.App_x", "my-app-x-fad04c93", "my-app-x-fad04c93", "My.App_x", "my-app-x-pods-71143f78"},
		{"web.example.com", "web-example-com-a273ea6b", "web-example-com-a273ea6b", "web.example.com", "web-example-com-pods-4ce167aa"},
		{"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.y", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-7b9a47cd", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-7b9a47cd", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-7b9a47cd", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-a3f66aca"},
		{"-", "3973e022", "x-3973e022", "3973e022", "pods-8130817a"},
	}
	for _, c := range cases {
		if got := workloadName(c[0]); got != c[1] {
			t.Errorf("workloadName(%q) = %q, want %q", c[0], got, c[1])
		}
		if got := serviceName(c[0]); got != c[2] {
			t.Errorf("serviceName(%q) = %q, want %q", c[0], got, c[2])
		}
		if got := labelValue(c[0]); got != c[3] {
			t.Errorf("labelValue(%q) = %q, want %q", c[0], got, c[3])
		}
		if got := governingServiceName(c[0]); got != c[4] {
			t.Errorf("governingServiceName(%q) = %q, want %q", c[0], got, c[4])
		}
	}
}
