package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/installpath"
	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/tool"
)

// pluginSchema is `clawhost plugin schema [-json] SOURCE|PATH`: the
// attributes of the plugin's config {} block as the plugin declares them
// (ConfigSchema), the same the host decodes the user's block against.
func pluginSchema(args []string, stdout, stderr io.Writer) int {
	asJSON := false
	var target string
	for _, a := range args {
		switch {
		case a == "-json" || a == "--json":
			asJSON = true
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(stderr, "clawhost plugin schema: unknown flag %s\n", a)
			return 2
		case target != "":
			fmt.Fprintln(stderr, "clawhost plugin schema: want one SOURCE or PATH")
			return 2
		default:
			target = a
		}
	}
	if target == "" {
		fmt.Fprintln(stderr, "clawhost plugin schema: want \"clawhost plugin schema [-json] SOURCE|PATH\" (a source such as telegram, or the binary's path)")
		return 2
	}
	path, err := pluginPath(target)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost plugin schema: %v\n", err)
		return 1
	}
	s, kinds, tools, err := fetchSchema(path)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost plugin schema: %s: %v\n", path, err)
		return 1
	}
	if asJSON {
		if s == nil {
			s = schema.Schema{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s)
		return 0
	}
	writeKinds(stdout, filepath.Base(path), kinds)
	writeSchema(stdout, filepath.Base(path), s)
	writeTools(stdout, filepath.Base(path), tools)
	return 0
}

// kindCalls says, per kind, when the host calls a plugin of it.
var kindCalls = map[string]string{
	"channel":          "a chat platform: messages in and replies out",
	"command":          "answers its /commands without the agent",
	"hook":             "before_agent_start: adds context to every agent turn",
	"message_received": "sees each inbound message before the queue: pass, rewrite, add notes or drop (the plugin block's on_error = \"skip\" | \"drop\" decides a failure)",
	"message_sending":  "sees each agent reply before the outbox: rewrite, add media or suppress",
	"agent_end":        "hears of each finished turn, in the background, at least once per call id",
	"tool":             "offers the agent tools (agent { tools = [...] } grants them), called through the host's MCP server",
}

// writeKinds prints the kinds the plugin offers and when the host calls
// each.
func writeKinds(w io.Writer, name string, kinds []string) {
	if len(kinds) == 0 {
		return
	}
	fmt.Fprintf(w, "%s offers:\n", name)
	for _, k := range kinds {
		fmt.Fprintf(w, "  %-17s %s\n", k, kindCalls[k])
	}
	fmt.Fprintln(w)
}

// pluginPath is the binary a SOURCE|PATH names: a path as it is, a source
// (telegram) as clawhost-<source> in the default plugin directory (beside
// the clawhost binary), else on PATH.
func pluginPath(target string) (string, error) {
	if strings.ContainsRune(target, os.PathSeparator) {
		if _, err := os.Stat(target); err != nil {
			return "", err
		}
		return target, nil
	}
	name := config.BinaryPrefix + target
	var tried []string
	if dir := installpath.ExecutableDir(); dir != "" { // the default plugin_dir
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
		tried = append(tried, dir)
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	tried = append(tried, "PATH")
	return "", fmt.Errorf("no plugin binary %s in %s; name the binary's path instead", name, strings.Join(tried, " or "))
}

// fetchSchema starts the plugin at path as the host does, asks for its
// kinds, schema and, when it offers tools, their list (unconfigured: a
// plugin whose tools depend on its configuration may list fewer), and
// stops it.
func fetchSchema(path string) (schema.Schema, []string, []tool.Spec, error) {
	dir, err := os.MkdirTemp("", "clawhost-schema-")
	if err != nil {
		return nil, nil, nil, err
	}
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		return nil, nil, nil, err
	}
	log := hclog.New(&hclog.LoggerOptions{Output: io.Discard})
	proc, plug, err := launchTestPlugin(path, data, 10*time.Second, log)
	if err != nil {
		return nil, nil, nil, err
	}
	defer proc.stop(5 * time.Second) //nolint:errcheck // the schema is what was asked for
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := plug.Describe(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	s, err := plug.ConfigSchema(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	var tools []tool.Spec
	if d.Tool {
		if tools, err = plug.ListTools(ctx); err != nil {
			return nil, nil, nil, err
		}
	}
	return s, d.Kinds(), tools, nil
}

// writeTools prints a tool plugin's tools: each name, the names an agent's
// tools grant and claude calls it by, its description and input schema.
func writeTools(w io.Writer, name string, tools []tool.Spec) {
	if len(tools) == 0 {
		return
	}
	fmt.Fprintf(w, "\ntools of %s (grant with agent { tools = [\"<instance>.<tool>\"] }; claude calls mcp__clawhost__<instance>__<tool>):\n", name)
	for _, t := range tools {
		fmt.Fprintf(w, "\n  %s\n    %s\n    input: %s\n", t.Name, strings.ReplaceAll(t.Description, "\n", " "), t.InputSchema)
		if err := tool.ValidSpec(t); err != nil {
			fmt.Fprintf(w, "    INVALID: %v (the host does not offer it)\n", err)
		}
	}
}

// writeSchema prints a schema as a table: name, type, required or the
// default, sensitive, the listen address, description.
func writeSchema(w io.Writer, name string, s schema.Schema) {
	if len(s) == 0 {
		fmt.Fprintf(w, "%s takes no config {} attributes.\n", name)
		return
	}
	fmt.Fprintf(w, "config {} of %s:\n\n", name)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ATTRIBUTE\tTYPE\tREQUIRED / DEFAULT\tDESCRIPTION")
	attrs := append(schema.Schema(nil), s...)
	sort.SliceStable(attrs, func(i, j int) bool { return attrs[i].Required && !attrs[j].Required })
	for _, a := range attrs {
		typ := a.Type
		if typ == "" {
			typ = "string"
		}
		if a.Sensitive {
			typ += " (sensitive)"
		}
		if a.Listen {
			// The address the plugin serves people on: audited, and local
			// on loopback (schema.Attribute.Listen).
			typ += " (listen address)"
		}
		def := "optional"
		switch {
		case a.Required:
			def = "required"
		case a.Default != nil:
			b, _ := json.Marshal(a.Default)
			def = "default " + string(b)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Name, typ, def, strings.ReplaceAll(a.Description, "\n", " "))
	}
	_ = tw.Flush()
}

// pluginDescriptor is `clawhost plugin descriptor`: the protocol's
// descriptor set (google.protobuf.FileDescriptorSet, binary, with every
// file it imports), what a plugin in another language builds its message
// classes from at run time — no checkout, no Go, no protoc.
func pluginDescriptor(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "clawhost plugin descriptor: takes no arguments; it writes the descriptor set to standard output (clawhost plugin descriptor > clawhost.binpb)")
		return 2
	}
	b, err := DescriptorSet()
	if err != nil {
		fmt.Fprintf(stderr, "clawhost plugin descriptor: %v\n", err)
		return 1
	}
	if _, err := stdout.Write(b); err != nil {
		fmt.Fprintf(stderr, "clawhost plugin descriptor: %v\n", err)
		return 1
	}
	return 0
}

// DescriptorSet is what `clawhost plugin descriptor` writes: the
// protocol's files and their imports, dependencies first, marshalled
// deterministically (the release archives carry it as clawhost.binpb).
func DescriptorSet() ([]byte, error) {
	var set descriptorpb.FileDescriptorSet
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor) error
	add = func(fd protoreflect.FileDescriptor) error {
		if seen[fd.Path()] {
			return nil
		}
		seen[fd.Path()] = true
		imports := fd.Imports()
		for i := range imports.Len() {
			dep, err := protoregistry.GlobalFiles.FindFileByPath(imports.Get(i).Path())
			if err != nil {
				return fmt.Errorf("import %s of %s: %w", imports.Get(i).Path(), fd.Path(), err)
			}
			if err := add(dep); err != nil {
				return err
			}
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
		return nil
	}
	if err := add(pb.File_clawhost_v1_plugin_proto); err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(&set)
}
