package config

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestListenerOverridesOfSSLKeys(t *testing.T) {
	b, warnings, err := Load("", []string{
		"listeners=PLAINTEXT://:0,SECURE://:0,CONTROLLER://:0",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SECURE:SSL,CONTROLLER:PLAINTEXT",
		"ssl.keystore.location=/broker-wide.jks",
		"listener.name.secure.ssl.keystore.location=/secure.p12",
		"listener.name.secure.ssl.keystore.type=PKCS12",
		"listener.name.secure.ssl.keystore.password=hunter2",
		"listener.name.SECURE.ssl.keystore.type=PEM",
		"listener.name.secure.not.a.key=1",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"listener.name.SECURE.ssl.keystore.type"`, `"listener.name.secure.not.a.key"`} {
		if !strings.Contains(strings.Join(warnings, "\n"), want) {
			t.Errorf("warnings %q do not name %s as unknown", warnings, want)
		}
	}
	for _, c := range []struct{ listener, key, want string }{
		{"SECURE", "ssl.keystore.location", "/secure.p12"},
		{"SECURE", "ssl.keystore.type", "PKCS12"},
		{"SECURE", "ssl.keystore.password", "hunter2"},
		{"SECURE", "ssl.client.auth", "none"},
		{"PLAINTEXT", "ssl.keystore.location", "/broker-wide.jks"},
		{"PLAINTEXT", "ssl.keystore.type", "JKS"},
	} {
		if got, _ := b.ListenerValue(c.listener, c.key); got != c.want {
			t.Errorf("ListenerValue(%s, %s) = %q, want %q", c.listener, c.key, got, c.want)
		}
	}
	if _, _, err := Load("", []string{"listener.name.secure.ssl.client.auth=sometimes"}, nil); err == nil {
		t.Error("an invalid per-listener ssl.client.auth was accepted")
	}
	dynamic, err := b.WithDynamic(map[string]string{"listener.name.secure.ssl.keystore.location": "/renewed.p12"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := dynamic.ListenerValue("SECURE", "ssl.keystore.location"); got != "/renewed.p12" {
		t.Errorf("dynamic per-listener keystore = %q", got)
	}
	if _, err := b.WithDynamic(map[string]string{"listener.name.secure.ssl.principal.mapping.rules": "DEFAULT"}, nil); err == nil {
		t.Error("a read-only ssl key was altered dynamically")
	}
}

func TestDescribeBrokerListsListenerOverrides(t *testing.T) {
	b, _, err := Load("", []string{"listener.name.secure.ssl.keystore.password=hunter2", "listener.name.secure.ssl.client.auth=required"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err = b.WithDynamic(map[string]string{"listener.name.secure.ssl.keystore.location": "/renewed.p12"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]ConfigEntry{}
	for _, e := range b.DescribeBroker(true) {
		entries[e.Name] = e
	}
	if e := entries["listener.name.secure.ssl.keystore.password"]; e.Value != nil || !e.Sensitive || len(e.Synonyms) == 0 || e.Synonyms[0].Value != nil {
		t.Errorf("sensitive per-listener password described as %+v", e)
	}
	e := entries["listener.name.secure.ssl.keystore.location"]
	if e.Value == nil || *e.Value != "/renewed.p12" || e.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Errorf("dynamic per-listener keystore described as %+v", e)
	}
	if e := entries["listener.name.secure.ssl.client.auth"]; e.Value == nil || *e.Value != "required" || len(e.Synonyms) != 2 || e.Synonyms[1].Name != "ssl.client.auth" {
		t.Errorf("static per-listener client auth described as %+v", e)
	}
}
