package sdk_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// envServe makes the test binary a plugin: TestMain calls sdk.Serve.
const envServe = "SDK_TEST_SERVE"

type echo struct{}

func (echo) Commands() []command.Spec { return []command.Spec{{Name: "echo"}} }

func (echo) Execute(_ context.Context, req command.Request) (command.Response, error) {
	if req.Args == askSecret {
		_, set := os.LookupEnv(pluginclient.EnvSecret)
		return command.Response{Replies: []command.Reply{{Text: fmt.Sprint(set)}}}, nil
	}
	return command.Response{Replies: []command.Reply{{Text: req.Args}}}, nil
}

// askSecret asks the echo plugin whether its environment (which its
// children would inherit) still has the host's secret.
const askSecret = "is the secret in your environment?"

func TestMain(m *testing.M) {
	if os.Getenv(envServe) == "1" {
		os.Exit(sdk.Serve(sdk.Plugin{Name: "echo", Version: "1.2.3", Command: echo{}}))
	}
	os.Exit(m.Run())
}

// TestServeSpeaksGoPluginsProtocol starts a plugin process served by
// sdk.Serve and drives it with go-plugin's own client, as clawhost does:
// the handshake is accepted, the health ping and a call work, the client
// logs no warning or error, and stopping the client shuts the plugin down
// gracefully (the controller's Shutdown): it exits by itself, before
// go-plugin would kill it (2 s), and its socket file is gone.
func TestServeSpeaksGoPluginsProtocol(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envServe+"=1")
	// go-plugin's client log, in a file (writes from several goroutines).
	logFile, err := os.Create(filepath.Join(t.TempDir(), "client.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	clientLog := func() string { b, _ := os.ReadFile(logFile.Name()); return string(b) }
	client := pluginclient.NewClient(pluginclient.Launch{Cmd: cmd, KeepHostEnv: true, StartTimeout: 10 * time.Second,
		Logger: hclog.New(&hclog.LoggerOptions{Output: logFile, Level: hclog.Debug})})
	defer client.Kill()
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, clientLog())
	}
	if err := rpc.Ping(); err != nil {
		t.Fatalf("ping (the health service): %v", err)
	}
	raw, err := rpc.Dispense(pluginclient.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	p := pluginclient.Wrap(raw.(*grpc.ClientConn))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := p.Describe(ctx)
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	if d.Name != "echo" || d.Version != "1.2.3" {
		t.Fatalf("describe: %+v", d)
	}
	socket := client.ReattachConfig().Addr.String()
	if _, err := os.Stat(socket); err != nil {
		t.Fatalf("the plugin's socket %s: %v", socket, err)
	}
	// The launch's secret: required from everyone else, and gone from the
	// plugin's environment.
	stranger, err := grpc.NewClient("unix:"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	if _, err := pluginclient.Wrap(stranger).Describe(ctx); err == nil || !strings.Contains(err.Error(), codes.Unauthenticated.String()) {
		t.Errorf("describe from a client without the secret: %v; want Unauthenticated", err)
	}
	if res, err := p.Execute(ctx, command.Request{Command: "echo", Args: askSecret}); err != nil || len(res.Replies) != 1 || res.Replies[0].Text != "false" {
		t.Errorf("%s still in the plugin's environment: %+v, %v", pluginclient.EnvSecret, res, err)
	}

	start := time.Now()
	client.Kill()
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("stopping the plugin took %v: it did not exit on the controller's Shutdown", took)
	}
	if !client.Exited() {
		t.Error("the plugin process has not exited")
	}
	if _, err := os.Stat(socket); !os.IsNotExist(err) {
		t.Errorf("the socket file %s is still there after the plugin stopped (stat: %v)", socket, err)
	}
	log := clientLog()
	for _, bad := range []string{"[WARN]", "[ERROR]", "forcefully"} {
		if strings.Contains(log, bad) {
			t.Errorf("go-plugin's client logged %s:\n%s", bad, log)
		}
	}
}
