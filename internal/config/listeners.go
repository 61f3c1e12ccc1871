package config

import (
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Listener is one entry of listeners or advertised.listeners:
// NAME://host:port. Name is upper-cased, as Kafka normalizes listener names.
// An empty Host binds all interfaces; Port 0 binds an ephemeral port.
type Listener struct {
	Name             string
	Host             string
	Port             int
	SecurityProtocol string // from listener.security.protocol.map
}

// Address is host:port, with IPv6 hosts in brackets.
func (l Listener) Address() string {
	return net.JoinHostPort(l.Host, strconv.Itoa(l.Port))
}

// listenerPattern is Kafka's listener syntax; an IPv6 host is bracketed.
var listenerPattern = regexp.MustCompile(`^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$`)

// securityProtocols are the protocols a listener may map to.
var securityProtocols = []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}

// hostname is os.Hostname, replaceable in tests.
var hostname = os.Hostname

// splitHostPort splits host:port and checks the port is in 0..65535; it
// returns the reason when the address is malformed.
func splitHostPort(address string) (string, int, string) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return "", 0, "Expected host:port, got " + address
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, "Port must be between 0 and 65535, got " + portText
	}
	return host, port, ""
}

// parseListeners parses a listeners-style list for key.
func parseListeners(key, value string, protocols map[string]string) ([]Listener, error) {
	var listeners []Listener
	names := make(map[string]bool)
	addresses := make(map[string]bool)
	for _, entry := range splitList(value) {
		match := listenerPattern.FindStringSubmatch(entry)
		if match == nil {
			return nil, invalidValue(key, value, "Unable to parse "+entry+" to a listener; expected NAME://host:port")
		}
		port, err := strconv.Atoi(match[3])
		if err != nil || port < 0 || port > 65535 {
			return nil, invalidValue(key, value, "Port must be between 0 and 65535 in "+entry)
		}
		l := Listener{Name: strings.ToUpper(match[1]), Host: match[2], Port: port}
		if l.Name == "" {
			return nil, invalidValue(key, value, "Listener name is empty in "+entry)
		}
		if names[l.Name] {
			return nil, invalidValue(key, value, "Each listener must have a different name, "+l.Name+" is repeated")
		}
		names[l.Name] = true
		if port != 0 {
			if addresses[l.Address()] {
				return nil, invalidValue(key, value, "Each listener must have a different port, "+l.Address()+" is repeated")
			}
			addresses[l.Address()] = true
		}
		protocol, ok := protocols[l.Name]
		if !ok {
			return nil, invalidValue(key, value, "No security protocol defined for listener "+l.Name)
		}
		l.SecurityProtocol = protocol
		listeners = append(listeners, l)
	}
	return listeners, nil
}

// parseProtocolMap parses listener.security.protocol.map.
func parseProtocolMap(value string) (map[string]string, error) {
	const key = "listener.security.protocol.map"
	protocols := make(map[string]string)
	for _, entry := range splitList(value) {
		name, protocol, ok := strings.Cut(entry, ":")
		name, protocol = strings.ToUpper(strings.TrimSpace(name)), strings.ToUpper(strings.TrimSpace(protocol))
		if !ok || name == "" {
			return nil, invalidValue(key, value, "Map entry should be of form <key>:<value>")
		}
		if !contains(securityProtocols, protocol) {
			return nil, invalidValue(key, value, "No enum constant "+protocol+"; expected one of "+strings.Join(securityProtocols, ", "))
		}
		if _, dup := protocols[name]; dup {
			return nil, invalidValue(key, value, "Duplicate listener name "+name)
		}
		protocols[name] = protocol
	}
	return protocols, nil
}

// deriveListeners fills Listeners, AdvertisedListeners,
// ListenerSecurityProtocolMap and InterBrokerListenerName.
func (b *Broker) deriveListeners() error {
	protocols, err := parseProtocolMap(b.effective["listener.security.protocol.map"])
	if err != nil {
		return err
	}
	for i, name := range b.ControllerListenerNames {
		b.ControllerListenerNames[i] = strings.ToUpper(name)
	}
	// As in Kafka, controller listeners default to PLAINTEXT unless the map
	// was set explicitly.
	if _, explicit := b.layered("listener.security.protocol.map"); !explicit {
		for _, name := range b.ControllerListenerNames {
			if _, ok := protocols[name]; !ok {
				protocols[name] = "PLAINTEXT"
			}
		}
	}
	b.ListenerSecurityProtocolMap = protocols

	b.Listeners, err = parseListeners("listeners", b.effective["listeners"], protocols)
	if err != nil {
		return err
	}

	advertisedKey := "advertised.listeners"
	advertisedValue, explicit := b.effective[advertisedKey]
	if !explicit {
		advertisedKey, advertisedValue = "listeners", b.effective["listeners"]
	}
	advertised, err := parseListeners(advertisedKey, advertisedValue, protocols)
	if err != nil {
		return err
	}
	b.AdvertisedListeners = nil
	for _, l := range advertised {
		if contains(b.ControllerListenerNames, l.Name) {
			continue
		}
		switch l.Host {
		case "0.0.0.0", "::":
			return invalidValue(advertisedKey, advertisedValue,
				"advertised.listeners cannot use the nonroutable meta-address "+l.Host+". Use a routable IP address.")
		case "":
			if l.Host, err = hostname(); err != nil {
				return fmt.Errorf("config: listener %s has no host and the hostname is unknown: %w", l.Name, err)
			}
		}
		b.AdvertisedListeners = append(b.AdvertisedListeners, l)
	}

	b.InterBrokerListenerName = b.effective["inter.broker.listener.name"]
	if b.InterBrokerListenerName == "" {
		b.InterBrokerListenerName = b.effective["security.inter.broker.protocol"]
	}
	b.InterBrokerListenerName = strings.ToUpper(b.InterBrokerListenerName)
	if contains(b.ControllerListenerNames, b.InterBrokerListenerName) {
		return &Error{Kind: ErrInvalidValue, Key: "inter.broker.listener.name",
			Message: "controller.listener.names must not contain a value appearing in the 'inter.broker.listener.name' configuration: " + b.InterBrokerListenerName}
	}
	if b.IsBroker() {
		var names []string
		for _, l := range b.AdvertisedListeners {
			names = append(names, l.Name)
		}
		if !contains(names, b.InterBrokerListenerName) {
			return &Error{Kind: ErrInvalidValue, Key: "inter.broker.listener.name", Message: fmt.Sprintf(
				"inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid options based on currently configured listeners are %s",
				strings.Join(names, ","))}
		}
	}
	return nil
}

// validClusterID reports whether id is a base64url-encoded 16-byte UUID, the
// form Kafka's Uuid.toString produces.
func validClusterID(id string) bool {
	raw, err := base64.RawURLEncoding.DecodeString(id)
	return err == nil && len(raw) == 16
}
