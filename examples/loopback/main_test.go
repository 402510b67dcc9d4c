package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

func TestConformance(t *testing.T) {
	var cur *loopback
	sdktest.Conformance(t, sdktest.ConformanceConfig{
		New: func(t *testing.T) sdk.Plugin {
			p := plugin()
			cur = p.Channel.(*loopback)
			return p
		},
		Config: []byte(`{"listen":"127.0.0.1:0","text_limit":4000}`),
		Inject: func(t *testing.T, text string) string {
			body, _ := json.Marshal(Inbound{ChatID: "c1", SenderID: "u1", Text: text, MessageID: strconv.FormatInt(time.Now().UnixNano(), 36)})
			url := "http://" + cur.ln.Addr().String() + "/inbound"
			// As a platform's webhook does: a message answered 503 is sent
			// again after the Retry-After it was given (a few times).
			go func() {
				for range 5 {
					resp, err := http.Post(url, "application/json", bytes.NewReader(body))
					if err != nil {
						return
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusServiceUnavailable {
						return
					}
					n, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
					time.Sleep(time.Duration(max(n, 1)) * time.Second)
				}
			}()
			return "c1"
		},
	})
}
