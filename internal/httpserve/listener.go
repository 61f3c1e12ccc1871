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
	Scheme  string // "http"
	Address string // host:port for net.Listen
}

// ParseListeners parses a comma-separated list of scheme://host:port
// entries. An empty string yields no listeners. Only http is served for now;
// https is refused with a message saying so, rather than served in clear.
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
	case "http":
	case "https":
		return Listener{}, fmt.Errorf("listener %q: https is not served yet", entry)
	default:
		return Listener{}, fmt.Errorf("listener %q: unknown scheme %q, expected http", entry, u.Scheme)
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
