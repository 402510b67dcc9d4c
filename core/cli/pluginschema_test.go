package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk/conformance"
	"github.com/clawhost/clawhost/sdk/schema"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// TestPluginDescriptor: the descriptor set stands on its own (every
// import inside it) and carries the protocol's services.
func TestPluginDescriptor(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := Main([]string{"plugin", "descriptor"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(out.Bytes(), &set); err != nil {
		t.Fatal(err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		t.Fatalf("the set does not stand on its own: %v", err)
	}
	for _, svc := range []string{"clawhost.v1.ChannelService", "clawhost.v1.CommandService", "clawhost.v1.HookService", "clawhost.v1.PluginService"} {
		if _, err := files.FindDescriptorByName(protoreflect.FullName(svc)); err != nil {
			t.Errorf("service %s: %v", svc, err)
		}
	}
	var again bytes.Buffer
	Main([]string{"plugin", "descriptor"}, nil, &again, &errb)
	if !bytes.Equal(out.Bytes(), again.Bytes()) {
		t.Error("two runs wrote different bytes")
	}
	if code := Main([]string{"plugin", "descriptor", "x"}, nil, &out, &errb); code != 2 {
		t.Errorf("an argument: exit %d, want 2", code)
	}
}

// TestPluginSchemaUsage: a missing or unknown plugin is a clear error.
func TestPluginSchemaUsage(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := Main([]string{"plugin", "schema"}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "SOURCE|PATH") {
		t.Errorf("no argument: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := Main([]string{"plugin", "schema", "no-such-plugin"}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "clawhost-no-such-plugin") {
		t.Errorf("unknown source: exit %d, %q", code, errb.String())
	}
}

// TestWriteSchemaMarks: the table says which attributes are sensitive and
// which one is the address the plugin serves people on.
func TestWriteSchemaMarks(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	writeSchema(&b, "clawhost-x", schema.Schema{
		{Name: "token", Sensitive: true, Required: true},
		{Name: "page", Type: "string", Default: "127.0.0.1:1", Listen: true, ListenToken: true},
	})
	for _, want := range []string{"string (sensitive)", "string (listen address)  default \"127.0.0.1:1\""} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestPluginTestHelpListsChecks: `clawhost help plugin test` names every
// check of the hook and tool kinds (the list comes from the conformance
// package, so a new check without a line here fails).
func TestPluginTestHelpListsChecks(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := Main([]string{"help", "plugin", "test"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, checks := range [][]conformance.Check{conformance.HookChecks(), conformance.ReceivedChecks(), conformance.SendingChecks(),
		conformance.EndChecks(), conformance.ToolChecks()} {
		for _, c := range checks {
			if !strings.Contains(out.String(), "  "+c.Name+" ") {
				t.Errorf("the help does not list the check %s:\n%s", c.Name, out.String())
			}
		}
	}
}
