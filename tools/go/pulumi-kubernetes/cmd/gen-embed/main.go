// Command gen-embed writes the provider's embed files from the schema.json and terraform-mapping.json committed
// in the provider module, with the schema's version set (what upstream's `go generate` step does).
//
//	go run ./cmd/gen-embed VERSION OUTDIR
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const providerModule = "github.com/pulumi/pulumi-kubernetes/provider/v4"

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen-embed VERSION OUTDIR")
		os.Exit(2)
	}
	version, out := os.Args[1], os.Args[2]
	dirOut, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", providerModule).Output()
	check(err)
	src := filepath.Join(strings.TrimSpace(string(dirOut)), "cmd", "pulumi-resource-kubernetes")

	var schema map[string]any
	check(json.Unmarshal(read(filepath.Join(src, "schema.json")), &schema))
	schema["version"] = version
	write(filepath.Join(out, "schema-embed.json"), schema)

	var mapping any
	check(json.Unmarshal(read(filepath.Join(src, "terraform-mapping.json")), &mapping))
	write(filepath.Join(out, "terraform-mapping-embed.json"), mapping)
}

func read(path string) []byte {
	b, err := os.ReadFile(path)
	check(err)
	return b
}

func write(path string, v any) {
	b, err := json.Marshal(v)
	check(err)
	check(os.WriteFile(path, b, 0o644))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen-embed:", err)
		os.Exit(1)
	}
}
