package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/cli"
	"github.com/clawhost/clawhost/core/config"
)

// statusIndent is the indent of what `clawhost status` shows under a
// plugin that needs attention (core/cli's attentionIndent).
const statusIndent = "      "

// run runs the command line args in this process, as the binary does
// (core/cli), with an empty stdin.
func run(args []string, stdout, stderr io.Writer) int {
	return cli.Main(args, strings.NewReader(""), stdout, stderr)
}

// fetchStatus reads /status.json from the admin endpoint of the host cfg
// configures (plain HTTP on loopback), with its admin token, as `clawhost
// status` does.
func fetchStatus(cfg *config.Config) (admin.Snapshot, error) {
	var snap admin.Snapshot
	token, err := admin.ReadToken(admin.TokenPath(cfg.DataDir))
	if err != nil {
		return snap, err
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+cfg.Admin.Listen+"/status.json", nil)
	if err != nil {
		return snap, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return snap, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return snap, fmt.Errorf("admin endpoint: %s", resp.Status)
	}
	return snap, json.NewDecoder(resp.Body).Decode(&snap)
}
