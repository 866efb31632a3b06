package canvas_test

import (
	"reflect"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/stretchr/testify/assert"
)

// fill sets every field reachable from v to a non-zero value: pointers are
// allocated, slices and maps get one element, so that a field added later
// is covered by TestVersion_Clone without changing it.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Struct:
		if v.Type().PkgPath() == "time" {
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		v.SetMapIndex(k, e)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint8:
		v.SetUint('1')
	case reflect.Float64:
		v.SetFloat(1)
	}
}

// shared returns the path of the first pointer, slice or map that a and b
// (of the same type) share.
func shared(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		return shared(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				if p := shared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); p != "" {
					return p
				}
			}
		}
	case reflect.Slice:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			return path
		}
		for i := range a.Len() {
			if p := shared(a.Index(i), b.Index(i), path+"[]"); p != "" {
				return p
			}
		}
	case reflect.Map:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			return path
		}
		for _, k := range a.MapKeys() {
			if p := shared(a.MapIndex(k), b.MapIndex(k), path+"[k]"); p != "" {
				return p
			}
		}
	}
	return ""
}

func TestVersion_Clone(t *testing.T) {
	t.Run("Deep", func(t *testing.T) {
		v := &canvas.Version{}
		fill(reflect.ValueOf(v).Elem())
		c := v.Clone()
		assert.Equal(t, v, c)
		assert.Empty(t, shared(reflect.ValueOf(v), reflect.ValueOf(c), "Version"), "shared with the original")

		c.Messages[0].Content = "changed"
		*c.Configuration.Temperature = 9
		c.Configuration.Extra["x"] = []byte("2")
		assert.Equal(t, "x", v.Messages[0].Content)
		assert.Equal(t, 1.0, *v.Configuration.Temperature)
		assert.Equal(t, "1", string(v.Configuration.Extra["x"]))
	})

	t.Run("NilAndEmpty", func(t *testing.T) {
		var v *canvas.Version
		assert.Nil(t, v.Clone())
		c := (&canvas.Version{Variables: []canvas.Variable{}}).Clone()
		assert.NotNil(t, c.Variables, "empty stays empty, not null")
		assert.Nil(t, c.Messages)
	})
}
