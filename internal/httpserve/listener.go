package httpserve

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Listener is one parsed listener entry.
type Listener struct {
	Scheme  string // "http" or "https"
	Address string // host:port for net.Listen
}

// ParseListeners parses a comma-separated list of scheme://host:port
// entries. An empty string yields no listeners. https listeners need
// Config.TLS.
func ParseListeners(raw string) ([]Listener, error) {
	var out []Listener
	for _, entry := range strings.Split(raw, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		l, err := parseListener(entry)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

func parseListener(entry string) (Listener, error) {
	u, err := url.Parse(entry)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return Listener{}, fmt.Errorf("listener %q: expected scheme://host:port", entry)
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.User != nil {
		return Listener{}, fmt.Errorf("listener %q: expected scheme://host:port with no path, query or user", entry)
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "http", "https":
	default:
		return Listener{}, fmt.Errorf("listener %q: unknown scheme %q, expected http or https", entry, u.Scheme)
	}
	host, portText, err := net.SplitHostPort(u.Host)
	if err != nil {
		return Listener{}, fmt.Errorf("listener %q: %w", entry, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return Listener{}, fmt.Errorf("listener %q: port %q is not in 0-65535", entry, portText)
	}
	return Listener{Scheme: scheme, Address: net.JoinHostPort(host, strconv.Itoa(port))}, nil
}

// AnyHTTPS reports whether any listener is https.
func AnyHTTPS(listeners []Listener) bool {
	for _, l := range listeners {
		if l.Scheme == "https" {
			return true
		}
	}
	return false
}
