// Package gfm is goldmark's GitHub Flavored Markdown extension (linkify,
// tables, strikethrough, task lists) carried in markup, so that the
// processes that render markdown (the host and the channel plugins) do not
// link goldmark's extension package.
//
// That package also holds the CJK, footnote, definition list and
// typographer extensions, and its package variables (linkify's two large
// expressions among them) are built at init in every process that imports
// it, whether or not it renders anything: about 0.33 MB of anonymous memory
// in an otherwise empty program (docs/performance.md). Here the files of
// the four GFM extensions are copied from goldmark v1.8.7 with three
// changes: the package name; the regular expressions are built on first
// use (sync.OnceValue); and the options and constructors markup does not
// use are left out. goldmark's LICENSE (MIT) is in this directory.
package gfm
