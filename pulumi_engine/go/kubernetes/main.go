// Command pulumi-resource-kubernetes serves the pulumi-kubernetes provider.
//
// The provider module's own main embeds a schema file that its release build generates and the module zip does
// not carry; pulumi_engine/build.py copies the module's cmd/pulumi-resource-kubernetes/schema.json and
// terraform-mapping.json beside this file in the build folder, and this main embeds them instead.
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
)

//go:embed schema-embed.json
var schema []byte

//go:embed terraform-mapping-embed.json
var mapping []byte

// version is set at build time to the version the Python SDK asks for (pulumi_kubernetes/pulumi-plugin.json).
var version = "0.0.0"

func main() { provider.Serve("kubernetes", version, schema, mapping) }
