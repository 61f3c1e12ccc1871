package cli

import "testing"

func TestJavaStringReplacesMaximalSubparts(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want string
	}{
		{[]byte("plain"), "plain"},
		{[]byte("é€😀"), "é€😀"},
		{[]byte{0xff, 'a'}, "\uFFFDa"},
		{[]byte{0xe2, 0x82, 'a'}, "\uFFFDa"},       // a 3-byte sequence cut short: one
		{[]byte{0xe0, 0x80, 'a'}, "\uFFFD\uFFFDa"}, // E0 80 is not a valid start: two
		{[]byte{0xf0, 0x9f, 0x98}, "\uFFFD"},       // a 4-byte sequence cut short at the end
		{[]byte{0xed, 0xa0, 0x80}, "\uFFFD\uFFFD\uFFFD"},
		{[]byte{0xc0, 0xaf}, "\uFFFD\uFFFD"},
	} {
		if got := javaString(c.in); got != c.want {
			t.Errorf("javaString(% x) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzJavaString(f *testing.F) {
	for _, seed := range [][]byte{nil, []byte("ok"), {0xe2, 0x82}, {0xf4, 0x90, 0x80, 0x80}, {0xff}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := javaString(b)
		if len(b) > 0 && len(s) == 0 {
			t.Fatalf("javaString(% x) is empty", b)
		}
		for _, r := range s {
			_ = r
		}
	})
}
