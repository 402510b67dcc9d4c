package turn

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	_ "image/gif" // decoders for prepareImage
	"image/jpeg"
	_ "image/png"
	"net/http"
	"os"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Limits of an image shown to claude. The API takes at most 5 MB of base64
// per image (3.75 MB of bytes) and scales anything over 1568 pixels on the
// long edge down anyway, so bigger images are downscaled here, where it
// costs nothing in tokens; at most maxImages per turn (the rest stay file
// paths claude can read).
const (
	maxImageBytes  = 3_750_000
	maxImageEdge   = 1568
	maxImages      = 8
	maxImagePixels = 50_000_000 // refuse to decode more (a decompression bomb)
)

// images collects the turn's inbound images, prepared for claude, in
// message order; an image that cannot be prepared stays a path only.
func (t *Turns) images(msgs []message.Message) []runner.Image {
	var out []runner.Image
	for i := range msgs {
		for _, md := range msgs[i].Media {
			if md.Path == "" || (md.Kind != channel.MediaImage && md.Kind != channel.MediaSticker) {
				continue
			}
			if len(out) == maxImages {
				t.log.Debug("more images than shown to claude; the rest are file paths", "max", maxImages)
				return out
			}
			data, err := os.ReadFile(md.Path)
			if err != nil {
				t.log.Warn("reading an image failed; claude gets its path only", "path", md.Path, "error", err)
				continue
			}
			im, ok := prepareImage(data)
			if !ok {
				t.log.Debug("image not shown inline (type or size); claude gets its path", "path", md.Path)
				continue
			}
			out = append(out, im)
		}
	}
	return out
}

// prepareImage returns data as an image claude can be shown: JPEG, PNG,
// GIF or WebP by content (the platform's MIME is not trusted), as is when
// within maxImageBytes and maxImageEdge, else decoded, downscaled to
// maxImageEdge on the long edge and encoded as JPEG (transparency on
// white). WebP, which the standard library cannot decode, passes only as
// is. ok is false for anything else, or what still does not fit.
func prepareImage(data []byte) (runner.Image, bool) {
	mime := http.DetectContentType(data)
	switch mime {
	case "image/jpeg", "image/png", "image/gif":
	case "image/webp":
		return runner.Image{MIME: mime, Data: data}, len(data) <= maxImageBytes
	default:
		return runner.Image{}, false
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return runner.Image{}, false
	}
	if len(data) <= maxImageBytes && max(cfg.Width, cfg.Height) <= maxImageEdge {
		return runner.Image{MIME: mime, Data: data}, true
	}
	if cfg.Width*cfg.Height > maxImagePixels {
		return runner.Image{}, false
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return runner.Image{}, false
	}
	small := downscale(src, maxImageEdge)
	for _, q := range []int{85, 70, 50} {
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, small, &jpeg.Options{Quality: q}); err != nil {
			return runner.Image{}, false
		}
		if buf.Len() <= maxImageBytes {
			return runner.Image{MIME: "image/jpeg", Data: buf.Bytes()}, true
		}
	}
	return runner.Image{}, false
}

// downscale returns src flattened on white and, when its long edge is over
// edge, shrunk to it (keeping the aspect ratio) by averaging each target
// pixel's source area. The source is flattened a band of rows at a time,
// so shrinking a 12-megapixel photo needs no second full-size copy.
func downscale(src image.Image, edge int) *image.RGBA {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	if max(w, h) <= edge {
		flat := image.NewRGBA(image.Rect(0, 0, w, h))
		draw.Draw(flat, flat.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
		draw.Draw(flat, flat.Bounds(), src, b.Min, draw.Over)
		return flat
	}
	nw, nh := edge, max(1, h*edge/w)
	if h > w {
		nw, nh = max(1, w*edge/h), edge
	}
	dst := image.NewRGBA(image.Rect(0, 0, nw, nh))
	band := image.NewRGBA(image.Rect(0, 0, w, h/nh+2))
	for y := 0; y < nh; y++ {
		y0, y1 := y*h/nh, max((y+1)*h/nh, y*h/nh+1)
		rows := image.Rect(0, 0, w, y1-y0)
		draw.Draw(band, rows, image.NewUniform(color.White), image.Point{}, draw.Src)
		draw.Draw(band, rows, src, image.Point{X: b.Min.X, Y: b.Min.Y + y0}, draw.Over)
		for x := 0; x < nw; x++ {
			x0, x1 := x*w/nw, max((x+1)*w/nw, x*w/nw+1)
			var r, g, bl, n uint32
			for sy := 0; sy < y1-y0; sy++ {
				row := band.Pix[sy*band.Stride:]
				for sx := x0; sx < x1; sx++ {
					p := row[sx*4:]
					r, g, bl, n = r+uint32(p[0]), g+uint32(p[1]), bl+uint32(p[2]), n+1
				}
			}
			o := dst.Pix[y*dst.Stride+x*4:]
			o[0], o[1], o[2], o[3] = uint8(r/n), uint8(g/n), uint8(bl/n), 255
		}
	}
	return dst
}
