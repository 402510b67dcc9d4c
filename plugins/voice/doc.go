// Package voice is the voice plugin: voice notes in and voice replies out,
// built on the host's lifecycle hooks.
//
// In, as a message_received hook: each voice note or audio file of a
// message the agent would get is turned into text by the configured
// speech-to-text engine — a command (whisper.cpp's CLI, or any program that
// reads audio and prints text) or an HTTP API — before the message is
// queued; the transcript replaces the audio in what claude reads. With
// show_transcript the chat sees "🎙 …" above the answer. Without an engine
// the plugin says so once (validate) and voice notes arrive as files.
//
// Out, as a message_sending hook: in a chat whose /voice mode says so (on,
// or auto after a voice note) the reply gets a voice note — text-to-speech
// through espeak-ng by default, or any command or HTTP API — encoded by
// ffmpeg as the channel wants it (OGG/Opus voice notes for Telegram and
// WhatsApp, an MP3 file elsewhere). The text is still sent; code blocks
// are not read aloud and long replies are spoken up to max_spoken
// characters. A failing engine leaves the text, with one notice per
// outage and chat.
//
// The /voice command (a command plugin in the same process) sets a chat's
// mode; modes and the per-chat memory between the two hooks live in
// state.json in the instance's data directory (0600).
//
// Files: voice.go (the plugin, its settings and the hooks), probe.go (the
// live checks of clawhost doctor), speech.go
// (the engines: commands, HTTP, ffmpeg), speakable.go (what is read aloud),
// state.go (per-chat state), command.go (/voice).
package voice
