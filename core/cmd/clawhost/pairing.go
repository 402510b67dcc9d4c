package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/clawhost/clawhost/core"
	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
)

// pairing is `clawhost pairing list` and `clawhost pairing approve CODE`.
// While clawhost runs, the database is locked by it: the command then goes
// through the admin endpoint on loopback; otherwise it opens the database
// itself.
func pairing(path string, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] == "approve" && len(args) != 2) || (args[0] != "approve" && args[0] != "list") {
		fmt.Fprintln(stderr, "usage: clawhost pairing list [-config FILE]\n       clawhost pairing approve CODE [-config FILE]")
		return 2
	}
	cfg, ok := load(path, stderr)
	if !ok {
		return 1
	}
	code := ""
	if len(args) == 2 {
		code = strings.TrimSpace(args[1])
	}
	if cfg.Admin.Listen != "" {
		out, err := pairingHTTP(cfg, code)
		if err == nil {
			fmt.Fprint(stdout, out)
			return 0
		}
		// Not running (nothing listens, or it never made its token):
		// the database, below.
		if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "clawhost pairing: %v\n", err)
			return 1
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := core.OpenStore(ctx, cfg, core.HostID(cfg), nil)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost pairing: %v (if clawhost is running, enable its admin endpoint: admin { listen = %q })\n", err, config.DefaultAdminListen)
		return 1
	}
	defer db.Close()
	api := core.PairingAPI{DB: db}
	if code == "" {
		codes, err := api.PendingPairings(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "clawhost pairing: %v\n", err)
			return 1
		}
		fmt.Fprint(stdout, formatCodes(codes))
		return 0
	}
	entry, err := api.ApprovePairing(ctx, code)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost pairing: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "approved %s\n", entry)
	return 0
}

func formatCodes(codes []admin.PairingCode) string {
	if len(codes) == 0 {
		return "no pending pairing codes\n"
	}
	var b strings.Builder
	for _, c := range codes {
		fmt.Fprintf(&b, "%s  %s:%s  expires %s\n", c.Code, c.Instance, c.SenderID, c.ExpiresAt.Format(time.RFC3339))
	}
	return b.String()
}

// pairingHTTP lists or approves through a running clawhost's admin endpoint.
func pairingHTTP(cfg *config.Config, code string) (string, error) {
	if code == "" {
		resp, err := adminDo(cfg, http.MethodGet, "/pairing", "", nil, 10*time.Second)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var codes []admin.PairingCode
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&codes) != nil {
			return "", fmt.Errorf("admin endpoint: %s", resp.Status)
		}
		return formatCodes(codes), nil
	}
	body, _ := json.Marshal(map[string]string{"code": code})
	resp, err := adminDo(cfg, http.MethodPost, "/pairing/approve", "application/json", bytes.NewReader(body), 10*time.Second)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		Approved string `json:"approved"`
		Error    string `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != http.StatusOK {
		if out.Error == "" {
			out.Error = resp.Status
		}
		return "", errors.New(out.Error)
	}
	return "approved " + out.Approved + "\n", nil
}
