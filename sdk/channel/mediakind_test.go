package channel

import "testing"

func TestMediaKindOf(t *testing.T) {
	t.Parallel()
	for mime, want := range map[string]MediaKind{
		"image/png":                 MediaImage,
		"image/webp":                MediaImage,
		"audio/ogg":                 MediaAudio,
		"audio/mpeg":                MediaAudio,
		"video/mp4":                 MediaVideo,
		"application/pdf":           MediaDocument,
		"text/plain; charset=utf-8": MediaDocument,
		"":                          MediaDocument,
		"imagex/png":                MediaDocument,
		"IMAGE":                     MediaDocument,
	} {
		if got := MediaKindOf(mime); got != want {
			t.Errorf("MediaKindOf(%q) = %s, want %s", mime, got, want)
		}
	}
}
