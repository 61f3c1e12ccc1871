package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// apiVersionsOutOfScope are the client-listener API keys of Kafka 4.4 that
// other work owns (security, quotas, share and streams groups) or that
// Samsa does not serve yet; the test checks every other key. A key listed
// here that Samsa does serve must still be at Kafka's newest version.
var apiVersionsOutOfScope = map[int16]string{
	17: "security", 36: "security", 29: "security", 30: "security", 31: "security",
	38: "security", 39: "security", 40: "security", 41: "security", 50: "security", 51: "security",
	76: "share groups", 77: "share groups", 78: "share groups", 79: "share groups",
	83: "share groups", 84: "share groups", 85: "share groups", 86: "share groups",
	87: "share groups", 90: "share groups", 91: "share groups", 92: "share groups",
	88: "streams groups", 89: "streams groups", 93: "streams groups",
	// Not served yet (docs/compatibility.md, "Behaviour differences").
	64: "UnregisterBroker", 80: "dynamic quorum", 81: "dynamic quorum", 94: "UnregisterController",
}

// TestApiVersionsAtKafka44Maxima asks a real node for its ApiVersions and
// compares them with franz-go's table of what Apache Kafka 4.4 advertises
// on a client listener: every key in scope must be served, at Kafka 4.4's
// newest version.
func TestApiVersionsAtKafka44Maxima(t *testing.T) {
	tn := startTestNode(t)
	versions, err := tn.admin().ApiVersions(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	var advertised map[int16]int16
	versions.Each(func(v kadm.BrokerApiVersions) {
		if v.Err != nil {
			t.Fatal(v.Err)
		}
		advertised = map[int16]int16{}
		v.EachKeySorted(func(key, _, max int16) { advertised[key] = max })
	})
	kafka := kversion.V4_4_0()
	kafka.EachMaxKeyVersion(func(key, kafkaMax int16) {
		served, ok := advertised[key]
		_, outOfScope := apiVersionsOutOfScope[key]
		switch {
		case !ok && !outOfScope:
			t.Errorf("%s (%d): not advertised; Kafka 4.4 serves up to v%d", kmsg.NameForKey(key), key, kafkaMax)
		case ok && served < kafkaMax:
			t.Errorf("%s (%d): advertised up to v%d; Kafka 4.4 serves up to v%d", kmsg.NameForKey(key), key, served, kafkaMax)
		}
	})
}
