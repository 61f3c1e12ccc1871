package config

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConfigEntry is one config of a DescribeConfigs (or CreateTopics v5+)
// response, shaped like kmsg.DescribeConfigsResponseResourceConfig.
type ConfigEntry struct {
	Name string
	// Value is nil for a key with no value (Kafka's null default) and for
	// sensitive keys.
	Value     *string
	Source    kmsg.ConfigSource
	ReadOnly  bool
	Sensitive bool
	Type      kmsg.ConfigType
	Doc       string
	// Synonyms, when asked for, lists where the value could come from,
	// highest precedence first; the first is where it does come from.
	Synonyms []ConfigSynonym
}

// ConfigSynonym is one place a config's value can come from.
type ConfigSynonym struct {
	Name   string
	Value  *string
	Source kmsg.ConfigSource
}

// brokerSynonyms lists the broker keys that configure the same thing as name,
// highest precedence first, as Kafka's DynamicBrokerConfig.brokerConfigSynonyms.
func brokerSynonyms(name string) []string {
	switch name {
	case "log.roll.ms", "log.roll.hours":
		return []string{"log.roll.ms", "log.roll.hours"}
	case "log.roll.jitter.ms", "log.roll.jitter.hours":
		return []string{"log.roll.jitter.ms", "log.roll.jitter.hours"}
	case "log.flush.interval.ms":
		return []string{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"}
	case "log.retention.ms", "log.retention.minutes", "log.retention.hours":
		return []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"}
	}
	return []string{name}
}

// configSynonyms follows Kafka's ConfigHelper.configSynonyms: the synonyms
// set per broker dynamically, then as dynamic cluster defaults, then
// statically, then those with a default, each group in synonym order; then
// everything before the first entry for name itself is dropped.
//
// That last step means a topic's retention.ms reports no broker synonyms
// (and source DEFAULT_CONFIG) unless log.retention.ms itself is set, even
// when log.retention.hours is: Apache Kafka behaves the same way, and
// clients see the effective value either way.
func (b *Broker) configSynonyms(name string, synonyms []string, sensitive bool) []ConfigSynonym {
	layers := []struct {
		values map[string]string
		source kmsg.ConfigSource
	}{
		{b.dynamicBroker, kmsg.ConfigSourceDynamicBrokerConfig},
		{b.dynamicDefault, kmsg.ConfigSourceDynamicDefaultBrokerConfig},
		{b.static, kmsg.ConfigSourceStaticBrokerConfig},
		{staticDefaults, kmsg.ConfigSourceDefaultConfig},
	}
	var out []ConfigSynonym
	for _, layer := range layers {
		for _, synonym := range synonyms {
			if value, ok := layer.values[synonym]; ok {
				out = append(out, ConfigSynonym{Name: synonym, Value: hide(value, sensitive), Source: layer.source})
			}
		}
	}
	for len(out) > 0 && out[0].Name != name {
		out = out[1:]
	}
	return out
}

// staticDefaults holds the default of every broker key that has one.
var staticDefaults = func() map[string]string {
	defaults := make(map[string]string, len(brokerKeys))
	for _, k := range brokerKeys {
		if !k.NoDefault {
			defaults[k.Name] = k.Default
		}
	}
	return defaults
}()

func hide(value string, sensitive bool) *string {
	if sensitive {
		return nil
	}
	return &value
}

// entry assembles a ConfigEntry whose source is that of its first synonym.
func entry(k *Key, value *string, synonyms []ConfigSynonym, readOnly, includeSynonyms bool) ConfigEntry {
	e := ConfigEntry{
		Name:      k.Name,
		Value:     value,
		Source:    kmsg.ConfigSourceDefaultConfig,
		ReadOnly:  readOnly,
		Sensitive: k.Sensitive,
		Type:      k.Type,
		Doc:       k.Doc,
	}
	if k.Sensitive {
		e.Value = nil
	}
	if len(synonyms) > 0 {
		e.Source = synonyms[0].Source
	}
	if includeSynonyms {
		e.Synonyms = synonyms
	}
	return e
}

// DescribeBroker describes every broker key for a DescribeConfigs of this
// broker's resource (its node id), sorted by name. Keys Kafka allows to be
// altered dynamically are described as not read-only.
func (b *Broker) DescribeBroker(includeSynonyms bool) []ConfigEntry {
	out := make([]ConfigEntry, 0, len(brokerKeys))
	for _, k := range BrokerKeys() {
		var value *string
		if v, ok := b.effective[k.Name]; ok {
			value = &v
		}
		synonyms := b.configSynonyms(k.Name, brokerSynonyms(k.Name), k.Sensitive)
		out = append(out, entry(&k, value, synonyms, !k.Dynamic, includeSynonyms))
	}
	out = append(out, b.describeListenerOverrides(includeSynonyms)...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// DescribeBrokerDefaults describes the cluster-wide dynamic defaults for a
// DescribeConfigs of the default broker resource (name ""): only keys set
// as dynamic defaults, with only dynamic-default synonyms.
func (b *Broker) DescribeBrokerDefaults(includeSynonyms bool) []ConfigEntry {
	var out []ConfigEntry
	for _, k := range BrokerKeys() {
		v, ok := b.dynamicDefault[k.Name]
		if !ok {
			continue
		}
		var synonyms []ConfigSynonym
		for _, s := range b.configSynonyms(k.Name, brokerSynonyms(k.Name), k.Sensitive) {
			if s.Source == kmsg.ConfigSourceDynamicDefaultBrokerConfig {
				synonyms = append(synonyms, s)
			}
		}
		out = append(out, entry(&k, &v, synonyms, !k.Dynamic, includeSynonyms))
	}
	return out
}

// DescribeTopic describes every topic key of a topic with the given
// overrides, sorted by name, as Kafka's ConfigHelper.createTopicConfigEntry:
// the value is the effective one; the synonyms are the topic override
// (DYNAMIC_TOPIC_CONFIG) if any, then the broker synonyms as configSynonyms
// reports them; the source is the first synonym's, else DEFAULT_CONFIG.
func (b *Broker) DescribeTopic(overrides map[string]string, includeSynonyms bool) []ConfigEntry {
	out := make([]ConfigEntry, 0, len(topicKeys))
	for _, k := range TopicKeys() {
		value, overridden := b.topicValue(&k, overrides)
		var synonyms []ConfigSynonym
		if overridden {
			synonyms = append(synonyms, ConfigSynonym{Name: k.Name, Value: hide(value, k.Sensitive), Source: kmsg.ConfigSourceDynamicTopicConfig})
		}
		if k.Synonym != "" {
			synonyms = append(synonyms, b.configSynonyms(k.Synonym, brokerSynonyms(k.Synonym), k.Sensitive)...)
		}
		out = append(out, entry(&k, &value, synonyms, false, includeSynonyms))
	}
	return out
}

// FilterEntries keeps the entries named in names, in entries' order; nil or
// empty names keeps all, as a DescribeConfigs request with null or empty
// ConfigNames asks for every config.
func FilterEntries(entries []ConfigEntry, names []string) []ConfigEntry {
	if len(names) == 0 {
		return entries
	}
	wanted := make(map[string]bool, len(names))
	for _, n := range names {
		wanted[n] = true
	}
	var out []ConfigEntry
	for _, e := range entries {
		if wanted[e.Name] {
			out = append(out, e)
		}
	}
	return out
}
