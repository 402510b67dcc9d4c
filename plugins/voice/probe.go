package voice

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

// probeText is what the probe has the text-to-speech engine say.
const probeText = "clawhost voice check."

// runProbe is the plugin's live check (clawhost doctor, validate -probe):
// which speech-to-text engine voice notes go to (none: they arrive as
// files), and a real voice note made by the text-to-speech command and
// ffmpeg. An HTTP engine is named, not called (a call may cost money).
func runProbe(ctx context.Context, cfg schema.Config) (probe.Report, error) {
	c, err := parse(cfg)
	if err != nil {
		return probe.Report{}, err
	}
	var rep probe.Report
	add := func(name string, v probe.Verdict, found, do string) {
		rep.Checks = append(rep.Checks, probe.Check{Name: name, Verdict: v, Found: found, Do: do})
	}
	switch {
	case c.stt == nil:
		add("speech to text", probe.Warn, "no engine: voice notes reach the agent as audio files",
			"set stt_command (whisper.cpp's whisper-cli, say) or stt_url in the plugin block (docs/voice.md)")
	case c.stt.url != "":
		add("speech to text", probe.OK, "the API at "+hostOf(c.stt.url), "")
	default:
		if p, err := exec.LookPath(c.stt.command[0]); err != nil {
			add("speech to text", probe.Fail, filepath.Base(c.stt.command[0])+" is not on PATH: voice notes stay audio files", "install it or give stt_command its full path")
		} else {
			add("speech to text", probe.OK, p, "")
		}
	}
	if _, err := exec.LookPath(c.ffmpeg); err != nil {
		add("ffmpeg", probe.Fail, "ffmpeg is not on PATH: no voice replies, no {wav}", "apt-get install ffmpeg, or set ffmpeg to its path")
		return rep, nil
	}
	add("ffmpeg", probe.OK, c.ffmpeg+" found", "")
	switch {
	case c.tts == nil:
	case c.tts.url != "":
		add("text to speech", probe.OK, "the API at "+hostOf(c.tts.url), "")
	default:
		work, err := os.MkdirTemp("", "voice-probe-")
		if err != nil {
			return rep, err
		}
		defer os.RemoveAll(work)
		eng := &engine{ffmpeg: c.ffmpeg, env: c.env, work: work}
		start := time.Now()
		audio, err := eng.speak(ctx, c.tts, probeText, oggOpus)
		if err != nil {
			do := "check tts_command (docs/voice.md)"
			if len(c.tts.command) > 0 && c.tts.command[0] == defaultTTS[0] {
				do = "apt-get install espeak-ng"
			}
			add("text to speech", probe.Fail, "no voice note: "+err.Error(), do)
			break
		}
		add("text to speech", probe.OK, fmt.Sprintf("%s made a voice note (%d bytes) in %s", filepath.Base(c.tts.command[0]), len(audio), time.Since(start).Round(time.Millisecond)), "")
	}
	return rep, nil
}

// hostOf is the host of an API URL, what a report may name of it.
func hostOf(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Host
	}
	return "(invalid URL)"
}
