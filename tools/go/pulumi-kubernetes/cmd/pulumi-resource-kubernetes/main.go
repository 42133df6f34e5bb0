// Command pulumi-resource-kubernetes serves the upstream provider. Upstream's own main embeds two generated,
// git-ignored files that are not in the module zip; cmd/gen-embed writes them here at build time.
package main

import (
	_ "embed"
	"os"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema-embed.json
var pulumiSchema []byte

//go:embed terraform-mapping-embed.json
var terraformMapping []byte

func main() {
	// The provider keeps nothing that must outlive its engine: end at once when `pulumi up` is gone.
	exitWithParent(func() { os.Exit(1) })
	provider.Serve("kubernetes", version.Version, pulumiSchema, terraformMapping)
}
