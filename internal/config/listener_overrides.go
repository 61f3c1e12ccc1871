package config

import "strings"

// listenerPrefix starts Kafka's per-listener keys:
// listener.name.<listener>.<key>, with the listener name in lower case.
const listenerPrefix = "listener.name."

// listenerOverridable reports whether key may be set per listener. Kafka
// allows it for the security keys: ssl.*, sasl.* and the
// <mechanism>.sasl.jaas.config form of SASL, and for
// max.connection.creation.rate.
func listenerOverridable(key string) bool {
	if key == "max.connection.creation.rate" {
		return true
	}
	if strings.HasPrefix(key, "ssl.") || strings.HasPrefix(key, "sasl.") {
		return true
	}
	if _, rest, ok := strings.Cut(key, "."); ok && strings.HasPrefix(rest, "sasl.") {
		return true
	}
	return false
}

// splitListenerKey splits listener.name.<listener>.<key> into the lower-case
// listener name and the key, when name has that form.
func splitListenerKey(name string) (listener, key string, ok bool) {
	rest, ok := strings.CutPrefix(name, listenerPrefix)
	if !ok {
		return "", "", false
	}
	listener, key, ok = strings.Cut(rest, ".")
	if !ok || listener == "" || listener != strings.ToLower(listener) {
		return "", "", false
	}
	return listener, key, true
}

// keyFor finds the key that governs name: a broker key itself, or, for
// listener.name.<listener>.<key>, the key it overrides. Mechanism-prefixed
// SASL keys (<mechanism>.sasl.jaas.config) govern themselves through the
// sasl.jaas.config key when it exists.
func keyFor(name string) (*Key, bool) {
	if i, ok := brokerKeyIndex[name]; ok {
		return &brokerKeys[i], true
	}
	_, key, ok := splitListenerKey(name)
	if !ok || !listenerOverridable(key) {
		return nil, false
	}
	if i, ok := brokerKeyIndex[key]; ok {
		return &brokerKeys[i], true
	}
	if _, rest, cut := strings.Cut(key, "."); cut {
		if i, ok := brokerKeyIndex[rest]; ok && strings.HasPrefix(rest, "sasl.") {
			return &brokerKeys[i], true
		}
	}
	return nil, false
}

// ListenerValue returns the value of key for a listener: its
// listener.name.<listener>.<key> override when one is set (dynamically or
// statically), else the broker-wide effective value (which may be the
// default).
func (b *Broker) ListenerValue(listener, key string) (string, bool) {
	if listenerOverridable(key) {
		if value, ok := b.layered(listenerPrefix + strings.ToLower(listener) + "." + key); ok {
			return value, true
		}
	}
	value, ok := b.effective[key]
	return value, ok
}

// ListenerOverrides returns the listener.name.<listener>.* keys set in any
// layer, keyed by the full name, for describing and for detecting changes.
func (b *Broker) ListenerOverrides(listener string) map[string]string {
	prefix := listenerPrefix + strings.ToLower(listener) + "."
	out := make(map[string]string)
	for _, layer := range []map[string]string{b.static, b.dynamicDefault, b.dynamicBroker} {
		for name, value := range layer {
			if strings.HasPrefix(name, prefix) {
				out[name] = value
			}
		}
	}
	return out
}

// describeListenerOverrides describes the listener.name.<listener>.* keys
// set in any layer, as Kafka's DescribeConfigs of a broker lists its
// per-listener configs: the synonyms are the key itself, then the key it
// overrides.
func (b *Broker) describeListenerOverrides(includeSynonyms bool) []ConfigEntry {
	names := make(map[string]string)
	for _, layer := range []map[string]string{b.static, b.dynamicDefault, b.dynamicBroker} {
		for name := range layer {
			if _, _, ok := splitListenerKey(name); ok {
				names[name] = ""
			}
		}
	}
	var out []ConfigEntry
	for _, name := range sortedNames(names) {
		k, ok := keyFor(name)
		if !ok {
			continue
		}
		_, base, _ := splitListenerKey(name)
		value, _ := b.layered(name)
		e := entry(k, &value, b.configSynonyms(name, []string{name, base}, k.Sensitive), !k.Dynamic, includeSynonyms)
		e.Name = name
		out = append(out, e)
	}
	return out
}
