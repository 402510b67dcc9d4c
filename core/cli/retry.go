package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// retry is `clawhost retry INSTANCE`: ask the running host to call the
// plugin's Retry — what the retry button of the status page does for a
// plugin that needs attention ("Show a new QR code"). Exit 0 when the
// plugin took the request (its next status shows the outcome), 1 when the
// instance is unknown, offers no retry or refused, 2 on bad usage or when
// the host cannot be reached.
func retry(at hostAt, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || args[0] == "" {
		fmt.Fprintln(stderr, "usage: clawhost retry INSTANCE [-config FILE]")
		return 2
	}
	instance := args[0]
	cfg, ok := loadAdmin("retry", at, stderr, "")
	if !ok {
		return 2
	}
	resp, err := adminDo(cfg, http.MethodPost, "/plugins/"+url.PathEscape(instance)+"/retry", "", nil, 30*time.Second)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost retry: %v (is clawhost running with this config?)\n", err)
		return 2
	}
	defer resp.Body.Close()
	var body struct {
		Error string `json:"error"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body)
	if resp.StatusCode != http.StatusOK {
		if body.Error == "" {
			body.Error = resp.Status
		}
		fmt.Fprintf(stderr, "clawhost retry %s: %s\n", instance, body.Error)
		return 1
	}
	fmt.Fprintf(stdout, "%s: retry requested; `clawhost status` shows what the plugin reports next\n", instance)
	return 0
}
