package controller

import "testing"

// Vectors from api/child-names.ts (workloadName, serviceName, labelValue): the peer names children as the
// TypeScript operator does.
func TestNamesMatchTheTypeScriptOperator(t *testing.T) {
	cases := [][4]string{
		{"app-00001", "app-00001", "app-00001", "app-00001"},
		{"1st-app", "1st-app", "x-1st-app-43857011", "1st-app"},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-11ee3912", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
		{"My.App_x", "my-app-x-fad04c93", "my-app-x-fad04c93", "My.App_x"},
		{"web.example.com", "web-example-com-a273ea6b", "web-example-com-a273ea6b", "web.example.com"},
		{"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.y", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-7b9a47cd", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-7b9a47cd", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-7b9a47cd"},
		{"-", "3973e022", "x-3973e022", "3973e022"},
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
	}
}
