package schema

import (
	"errors"
	"testing"
)

type testCfg struct {
	Name  string `json:"name"`
	Limit int    `json:"limit"`
	Wait  int    `json:"wait"`
}

func (c testCfg) withDefaults() testCfg {
	if c.Limit == 0 {
		c.Limit = 5
	}
	return c
}

func (c testCfg) validate() Diagnostics {
	var d Diagnostics
	if c.Name == "" {
		d.Add("name", "must not be empty", "set it")
	}
	if c.Limit > 10 {
		d.Add("limit", "is too large", "at most 10")
	}
	return d
}

// TestDecodeChecked: the block is decoded over start, defaulted, then
// checked; on a problem the error is every diagnostic and the config is
// still returned as far as it got; a malformed block is a decoding error.
func TestDecodeChecked(t *testing.T) {
	start := testCfg{Wait: 7}
	c, err := DecodeChecked(Config{JSON: []byte(`{"name":"x"}`)}, start, testCfg.withDefaults, testCfg.validate)
	if err != nil || c != (testCfg{Name: "x", Limit: 5, Wait: 7}) {
		t.Fatalf("valid block: %+v, %v", c, err)
	}
	c, err = DecodeChecked(Config{JSON: []byte(`{"limit":11,"wait":null}`)}, start, testCfg.withDefaults, testCfg.validate)
	var d Diagnostics
	if !errors.As(err, &d) || len(d) != 2 || d[0].Attribute != "name" || d[1].Attribute != "limit" || d[1].Detail != "at most 10" {
		t.Fatalf("invalid block: want both diagnostics, got %v", err)
	}
	if c != (testCfg{Limit: 11, Wait: 7}) {
		t.Errorf("invalid block: config as far as it got = %+v", c)
	}
	_, err = DecodeChecked(Config{Instance: "i", JSON: []byte(`{"limit":"many"}`)}, start, testCfg.withDefaults, testCfg.validate)
	if err == nil || errors.As(err, &d) {
		t.Errorf("malformed block: want a decoding error, got %v", err)
	}
	c, err = DecodeChecked[testCfg](Config{}, start, nil, nil)
	if err != nil || c != start {
		t.Errorf("empty block, no funcs: %+v, %v", c, err)
	}
}
