package sdktest

import (
	"reflect"
	"testing"

	"github.com/clawhost/clawhost/sdk"
)

// TestImplOfKeepsEveryField: every field of sdk.Plugin reaches the served
// implementation under its name (a field added to the plugin without a
// home here would be served as absent in tests only).
func TestImplOfKeepsEveryField(t *testing.T) {
	t.Parallel()
	var p sdk.Plugin
	pv := reflect.ValueOf(&p).Elem()
	for i := range pv.NumField() {
		f := pv.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Func:
			f.Set(reflect.MakeFunc(f.Type(), func([]reflect.Value) []reflect.Value { return nil }))
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		}
	}
	impl := reflect.ValueOf(implOf(p)).Elem()
	for i := range pv.NumField() {
		name := pv.Type().Field(i).Name
		got := impl.FieldByName(name)
		if !got.IsValid() {
			t.Errorf("sdk.Plugin.%s has no field in wire.Impl", name)
			continue
		}
		if k := pv.Field(i).Kind(); (k == reflect.Func || k == reflect.String || k == reflect.Slice) && got.IsZero() {
			t.Errorf("implOf drops sdk.Plugin.%s", name)
		}
	}
}
