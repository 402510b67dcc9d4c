package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/gocty"
)

// decodeBody decodes body into the struct val points to by the fields'
// `hcl:"name,kind"` tags, as hcl's gohcl.DecodeBody does, for the tag kinds
// this package uses: attributes (kind "attr" or none: required unless the
// field is a pointer; "optional"), blocks ("block": a struct, a pointer to
// one, or a slice of either), labels ("label"), the rest of a partially
// decoded body ("remain", an hcl.Body) and a block's definition range
// ("def_range"). Like gohcl it decodes into what val already holds (a
// block slice's existing elements, a block pointer already set), which is
// how defaults survive, and it leaves a block nil when it is repeated
// (after saying so).
//
// Not gohcl itself: gohcl imports hclwrite, for encoding, and hclwrite
// imports go-cmp, whose package variables (regular expressions) every run
// of the binary, the daemon's included, would build at init.
func decodeBody(body hcl.Body, ctx *hcl.EvalContext, val any) hcl.Diagnostics {
	rv := reflect.ValueOf(val)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("decodeBody: %T is not a pointer to a struct", val))
	}
	return decodeStruct(body, ctx, rv.Elem())
}

// fieldTags are the hcl tags of one struct type.
type fieldTags struct {
	attrs    map[string]int  // name → field
	optional map[string]bool // attributes that may be absent
	blocks   map[string]int  // block type → field
	labels   []int           // label fields, in order
	remain   int             // the "remain" field, or -1
	defRange int             // the "def_range" field, or -1
}

// tagsOf reads the hcl tags of struct type t.
func tagsOf(t reflect.Type) fieldTags {
	tags := fieldTags{attrs: map[string]int{}, optional: map[string]bool{}, blocks: map[string]int{}, remain: -1, defRange: -1}
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("hcl")
		if tag == "" {
			continue
		}
		name, kind, _ := strings.Cut(tag, ",")
		switch kind {
		case "", "attr":
			tags.attrs[name] = i
		case "optional":
			tags.attrs[name] = i
			tags.optional[name] = true
		case "block":
			tags.blocks[name] = i
		case "label":
			tags.labels = append(tags.labels, i)
		case "remain":
			tags.remain = i
		case "def_range":
			tags.defRange = i
		default:
			panic(fmt.Sprintf("decodeBody: hcl tag kind %q of %s.%s is not supported", kind, t, t.Field(i).Name))
		}
	}
	return tags
}

// schema is the body schema tags imply for struct type t: attributes and
// blocks sorted by name; an attribute is required unless it is optional
// or its field a pointer.
func (tags fieldTags) schema(t reflect.Type) *hcl.BodySchema {
	s := &hcl.BodySchema{}
	for _, n := range sortedKeys(tags.attrs) {
		required := !tags.optional[n] && t.Field(tags.attrs[n]).Type.Kind() != reflect.Pointer
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: n, Required: required})
	}
	for _, n := range sortedKeys(tags.blocks) {
		bt := blockStruct(t.Field(tags.blocks[n]).Type)
		var labels []string
		for _, i := range tagsOf(bt).labels {
			name, _, _ := strings.Cut(bt.Field(i).Tag.Get("hcl"), ",")
			labels = append(labels, name)
		}
		s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: n, LabelNames: labels})
	}
	return s
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// blockStruct is the struct type of a block field: T, *T, []T or []*T.
func blockStruct(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

var bodyType = reflect.TypeFor[hcl.Body]()

func decodeStruct(body hcl.Body, ctx *hcl.EvalContext, val reflect.Value) hcl.Diagnostics {
	t := val.Type()
	tags := tagsOf(t)
	var (
		content  *hcl.BodyContent
		leftover hcl.Body
		diags    hcl.Diagnostics
	)
	if tags.remain >= 0 {
		content, leftover, diags = body.PartialContent(tags.schema(t))
	} else {
		content, diags = body.Content(tags.schema(t))
	}
	if content == nil {
		return diags
	}
	if tags.remain >= 0 {
		if !bodyType.AssignableTo(t.Field(tags.remain).Type) {
			panic(fmt.Sprintf("decodeBody: the remain field of %s is not an hcl.Body", t))
		}
		val.Field(tags.remain).Set(reflect.ValueOf(leftover))
	}
	for _, n := range sortedKeys(tags.attrs) {
		attr := content.Attributes[n]
		if attr == nil {
			continue
		}
		diags = append(diags, decodeExpression(attr.Expr, ctx, val.Field(tags.attrs[n]).Addr().Interface())...)
	}
	byType := content.Blocks.ByType()
	for _, n := range sortedKeys(tags.blocks) {
		diags = append(diags, decodeBlocks(n, byType[n], body, ctx, val.Field(tags.blocks[n]))...)
	}
	return diags
}

// decodeBlocks decodes the blocks of type typ into field, a block field.
func decodeBlocks(typ string, blocks hcl.Blocks, body hcl.Body, ctx *hcl.EvalContext, field reflect.Value) hcl.Diagnostics {
	ft := field.Type()
	isSlice := ft.Kind() == reflect.Slice
	et := ft
	if isSlice {
		et = ft.Elem()
	}
	isPtr := et.Kind() == reflect.Pointer
	st := blockStruct(ft)
	switch {
	case len(blocks) > 1 && !isSlice:
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("Duplicate %s block", typ),
			Detail:   fmt.Sprintf("Only one %s block is allowed. Another was defined at %s.", typ, blocks[0].DefRange.String()),
			Subject:  &blocks[1].DefRange,
		}}
	case len(blocks) == 0:
		if isSlice || isPtr {
			return nil
		}
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("Missing %s block", typ),
			Detail:   fmt.Sprintf("A %s block is required.", typ),
			Subject:  body.MissingItemRange().Ptr(),
		}}
	}
	var diags hcl.Diagnostics
	if !isSlice {
		if !isPtr {
			return decodeBlock(blocks[0], ctx, field)
		}
		if field.IsNil() {
			field.Set(reflect.New(st))
		}
		return decodeBlock(blocks[0], ctx, field.Elem())
	}
	s := field
	for i, b := range blocks {
		if i >= s.Len() {
			s = reflect.Append(s, reflect.Zero(et))
		}
		e := s.Index(i)
		if isPtr {
			if e.IsNil() {
				e.Set(reflect.New(st))
			}
			e = e.Elem()
		}
		diags = append(diags, decodeBlock(b, ctx, e)...)
	}
	field.Set(s.Slice(0, len(blocks)))
	return diags
}

// decodeBlock decodes block's body into val, then its labels and its
// definition range.
func decodeBlock(block *hcl.Block, ctx *hcl.EvalContext, val reflect.Value) hcl.Diagnostics {
	diags := decodeStruct(block.Body, ctx, val)
	tags := tagsOf(val.Type())
	for i, l := range block.Labels {
		val.Field(tags.labels[i]).SetString(l)
	}
	if tags.defRange >= 0 {
		val.Field(tags.defRange).Set(reflect.ValueOf(block.DefRange))
	}
	return diags
}

// decodeExpression evaluates expr and stores its value in the Go value
// val points to, converted as gocty converts (gohcl.DecodeExpression).
func decodeExpression(expr hcl.Expression, ctx *hcl.EvalContext, val any) hcl.Diagnostics {
	v, diags := expr.Value(ctx)
	ty, err := gocty.ImpliedType(val)
	if err != nil {
		panic(fmt.Sprintf("decodeBody: %T has no cty type: %s", val, err))
	}
	if v, err = convert.Convert(v, ty); err == nil {
		err = gocty.FromCtyValue(v, val)
	}
	if err != nil {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Unsuitable value type",
			Detail:   "Unsuitable value: " + err.Error(),
			Subject:  expr.StartRange().Ptr(),
			Context:  expr.Range().Ptr(),
		})
	}
	return diags
}
