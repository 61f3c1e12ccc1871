package httpserve

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestParseListeners(t *testing.T) {
	got, err := ParseListeners(" http://127.0.0.1:8081 , http://:0")
	if err != nil || len(got) != 2 || got[0].Address != "127.0.0.1:8081" || got[1].Address != ":0" {
		t.Fatalf("got %v, %v", got, err)
	}
	if got, err := ParseListeners(""); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v, %v", got, err)
	}
	for _, bad := range []string{"127.0.0.1:8081", "ftp://h:1", "http://h", "http://h:99999", "http://h:1/path"} {
		if _, err := ParseListeners(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

type refuseAll struct{}

func (refuseAll) Authenticate(*http.Request) (Principal, error) { return "", errors.New("no") }

type acceptAll struct{}

func (acceptAll) Authenticate(*http.Request) (Principal, error) { return "User:alice", nil }

func TestServeBoundsBodyAndAuthenticates(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v map[string]any
		switch err := ReadJSON(r, &v, false); {
		case errors.Is(err, ErrBodyTooLarge):
			WriteError(w, http.StatusRequestEntityTooLarge, "", 41301, "too large")
		case err != nil:
			WriteError(w, http.StatusBadRequest, "", 40001, "malformed")
		case r.URL.Path == "/panic":
			panic("boom")
		default:
			WriteJSON(w, http.StatusOK, "", map[string]string{"principal": string(PrincipalOf(r))})
		}
	})
	s, err := Serve(Config{Name: "test", Listeners: []Listener{{Scheme: "http", Address: "127.0.0.1:0"}}, MaxBodyBytes: 64}, handler)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	base := "http://" + s.Addrs()[0].String()
	cases := []struct {
		path, body string
		status     int
		contains   string
	}{
		{"/", `{"a":1}`, 200, "User:ANONYMOUS"},
		{"/", `{"a":`, 400, "40001"},
		{"/", `{"a":1}{"b":2}`, 400, "40001"},
		{"/", `{"a":"` + strings.Repeat("x", 100) + `"}`, 413, "41301"},
		{"/panic", `{}`, 500, "50001"},
		{"/", `{}`, 200, "ANONYMOUS"}, // still serving after the panic
	}
	for _, c := range cases {
		resp, err := http.Post(base+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(body), c.contains) {
			t.Errorf("%s %q: %d %s, want %d containing %q", c.path, c.body, resp.StatusCode, body, c.status, c.contains)
		}
	}

	refusing, err := Serve(Config{Name: "test", Listeners: []Listener{{Scheme: "http", Address: "127.0.0.1:0"}}, Authenticator: refuseAll{}}, handler)
	if err != nil {
		t.Fatal(err)
	}
	defer refusing.Shutdown(context.Background())
	resp, err := http.Post("http://"+refusing.Addrs()[0].String(), "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Basic realm="samsa"` ||
		!strings.Contains(string(body), `"error_code":40101`) || !strings.Contains(string(body), `"message":"Unauthorized"`) {
		t.Fatalf("refused: %d %v %s", resp.StatusCode, resp.Header, body)
	}

	// The authenticated principal reaches the handler.
	accepting, err := Serve(Config{Name: "test", Listeners: []Listener{{Scheme: "http", Address: "127.0.0.1:0"}}, Authenticator: acceptAll{}}, handler)
	if err != nil {
		t.Fatal(err)
	}
	defer accepting.Shutdown(context.Background())
	resp, err = http.Post("http://"+accepting.Addrs()[0].String(), "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "User:alice") {
		t.Fatalf("accepted: %d %s", resp.StatusCode, body)
	}
}
