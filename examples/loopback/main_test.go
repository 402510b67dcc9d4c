package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

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
			body, _ := json.Marshal(Inbound{ChatID: "c1", SenderID: "u1", Text: text})
			url := "http://" + cur.ln.Addr().String() + "/inbound"
			go func() {
				resp, err := http.Post(url, "application/json", bytes.NewReader(body))
				if err == nil {
					resp.Body.Close()
				}
			}()
			return "c1"
		},
	})
}
