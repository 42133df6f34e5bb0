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
)

const providerModule = "github.com/pulumi/pulumi-kubernetes/provider/v4"

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen-embed VERSION OUTDIR")
		os.Exit(2)
	}
	version, out := os.Args[1], os.Args[2]
	src := filepath.Join(moduleDir(providerModule), "cmd", "pulumi-resource-kubernetes")

	var schema map[string]any
	check(json.Unmarshal(read(filepath.Join(src, "schema.json")), &schema))
	schema["version"] = version
	write(filepath.Join(out, "schema-embed.json"), schema)

	var mapping any
	check(json.Unmarshal(read(filepath.Join(src, "terraform-mapping.json")), &mapping))
	write(filepath.Join(out, "terraform-mapping-embed.json"), mapping)
}

// moduleDir downloads the module at the version this wrapper requires (a no-op when the module cache has it) and
// returns its directory. `go list -m -f {{.Dir}}` is not enough: it prints "" for a module not yet downloaded,
// which is every module on a fresh machine.
func moduleDir(module string) string {
	out, err := exec.Command("go", "mod", "download", "-json", module).Output()
	var info struct{ Dir, Error string }
	if jsonErr := json.Unmarshal(out, &info); jsonErr != nil && err == nil {
		err = jsonErr
	}
	if info.Error != "" {
		err = fmt.Errorf("go mod download %s: %s", module, info.Error)
	}
	check(err)
	if info.Dir == "" {
		check(fmt.Errorf("go mod download %s reported no directory", module))
	}
	return info.Dir
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
