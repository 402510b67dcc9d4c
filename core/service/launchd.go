package service

import (
	"encoding/xml"
	"fmt"
	"path/filepath"
	"strings"
)

// RenderLaunchd is the launchd property list of u, a user agent
// (~/Library/LaunchAgents/dev.clawhost.plist): started at login and at
// load, started again when it exits with an error (KeepAlive's
// SuccessfulExit=false) after RestartDelay, its output in u.LogDir.
// launchd reads no environment file: the host reads clawhost.env itself.
func RenderLaunchd(u Unit) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by clawhost service install; reinstall (-force) rather than edit. -->
<plist version="1.0">
<dict>
`)
	key(&b, 1, "Label")
	str(&b, 1, Label)
	key(&b, 1, "ProgramArguments")
	b.WriteString("\t<array>\n")
	for _, a := range []string{u.Binary, "run", "-config", u.Config} {
		str(&b, 2, a)
	}
	b.WriteString("\t</array>\n")
	key(&b, 1, "WorkingDirectory")
	str(&b, 1, u.WorkDir)
	key(&b, 1, "EnvironmentVariables")
	b.WriteString("\t<dict>\n")
	key(&b, 2, "HOME")
	str(&b, 2, u.Home)
	key(&b, 2, "PATH")
	str(&b, 2, strings.Join(u.Path, ":"))
	b.WriteString("\t</dict>\n")
	key(&b, 1, "RunAtLoad")
	b.WriteString("\t<true/>\n")
	key(&b, 1, "KeepAlive")
	b.WriteString("\t<dict>\n")
	key(&b, 2, "SuccessfulExit")
	b.WriteString("\t\t<false/>\n\t</dict>\n")
	key(&b, 1, "ThrottleInterval")
	fmt.Fprintf(&b, "\t<integer>%d</integer>\n", RestartDelay)
	key(&b, 1, "ExitTimeOut")
	fmt.Fprintf(&b, "\t<integer>%d</integer>\n", StopTimeout)
	key(&b, 1, "ProcessType")
	str(&b, 1, "Standard")
	key(&b, 1, "StandardOutPath")
	str(&b, 1, filepath.Join(u.LogDir, "clawhost.log"))
	key(&b, 1, "StandardErrorPath")
	str(&b, 1, filepath.Join(u.LogDir, "clawhost.log"))
	b.WriteString("</dict>\n</plist>\n")
	return []byte(b.String())
}

// key writes a <key> element at depth tabs.
func key(b *strings.Builder, depth int, k string) {
	fmt.Fprintf(b, "%s<key>%s</key>\n", strings.Repeat("\t", depth), escapeXML(k))
}

// str writes a <string> element at depth tabs.
func str(b *strings.Builder, depth int, s string) {
	fmt.Fprintf(b, "%s<string>%s</string>\n", strings.Repeat("\t", depth), escapeXML(s))
}

// escapeXML is s as XML character data.
func escapeXML(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}
