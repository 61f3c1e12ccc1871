package diffcheck

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
)

// sortKeys are the fields that identify an entry of a response list; lists
// of such entries are sorted by them before comparing, since brokers may
// list topics, partitions or configs in any order.
var sortKeys = []string{"Topic", "Name", "Partition", "Group", "NodeID", "ApiKey", "TransactionalID"}

// normalize sorts, in place, every list in v whose entries carry one of
// sortKeys.
func normalize(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			normalize(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				normalize(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			normalize(v.Index(i))
		}
		key := sortKeyOf(v.Type().Elem())
		if key == "" {
			return
		}
		entries := make([]reflect.Value, v.Len())
		for i := range entries {
			entries[i] = reflect.New(v.Type().Elem()).Elem()
			entries[i].Set(v.Index(i))
		}
		slices.SortStableFunc(entries, func(a, b reflect.Value) int {
			return cmp.Compare(keyText(a, key), keyText(b, key))
		})
		for i, e := range entries {
			v.Index(i).Set(e)
		}
	}
}

func sortKeyOf(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	for _, key := range sortKeys {
		if _, ok := t.FieldByName(key); ok {
			return key
		}
	}
	return ""
}

func keyText(v reflect.Value, key string) string {
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	f := v.FieldByName(key)
	if f.Kind() == reflect.Pointer {
		if f.IsNil() {
			return ""
		}
		f = f.Elem()
	}
	if f.Kind() == reflect.Int32 || f.Kind() == reflect.Int16 {
		return fmt.Sprintf("%012d", f.Int()+1<<31)
	}
	return fmt.Sprint(f.Interface())
}

// displayKey is an entry's key as the table prints it.
func displayKey(v reflect.Value, key string) string {
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	f := v.FieldByName(key)
	if f.Kind() == reflect.Pointer {
		if f.IsNil() {
			return "null"
		}
		f = f.Elem()
	}
	return fmt.Sprint(f.Interface())
}
