module github.com/clawhost/clawhost/markup

go 1.26.8

require (
	github.com/clawhost/clawhost/sdk v0.1.0
	github.com/rivo/uniseg v0.4.7
	github.com/yuin/goldmark v1.8.7
)
