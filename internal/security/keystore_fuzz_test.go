package security

import (
	"crypto/x509/pkix"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// FuzzStoreFiles feeds arbitrary bytes to every keystore and truststore
// reader, as a corrupt or hostile file on disk would: an error, never a
// panic.
func FuzzStoreFiles(f *testing.F) {
	authority, err := NewAuthority("fuzz CA", time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	certificate, err := authority.Issue(CertificateRequest{Subject: pkix.Name{CommonName: "fuzz"}, ValidFor: time.Hour})
	if err != nil {
		f.Fatal(err)
	}
	pemPair, _ := KeyPairPEM(certificate)
	p12, _ := KeystorePKCS12(certificate, "pw")
	jks, _ := KeystoreJKS(certificate, "pw")
	trustP12, _ := TruststorePKCS12("pw", authority.Certificate)
	trustJKS, _ := TruststoreJKS("pw", authority.Certificate)
	for _, seed := range [][]byte{pemPair, p12, jks, trustP12, trustJKS, CertificatePEM(authority.Certificate), {0xfe, 0xed, 0xfe, 0xed}, {0x30, 0x80}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := vfs.NewMem()
		file, err := fsys.Create("/store")
		if err != nil {
			t.Fatal(err)
		}
		file.Write(data)
		file.Close()
		for _, storeType := range []string{StoreTypePEM, StoreTypePKCS12, StoreTypeJKS} {
			s := Settings{KeystoreType: storeType, KeystoreLocation: "/store", KeystorePassword: "pw", TruststoreType: storeType, TruststoreLocation: "/store", TruststorePassword: "pw"}
			loadKeystore(fsys, s)
			loadTruststore(fsys, s)
		}
	})
}

func TestSettingsSourceAppliesChanges(t *testing.T) {
	p := newTestPKI(t)
	settings := mustSettings(t, map[string]string{KeyKeystoreType: "PEM", KeyKeystoreLocation: p.path("server.pem")})
	server, err := NewServerTLS(vfs.Default, settings, nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Now()
	server.now = func() time.Time { return clock }
	latest := settings
	calls := 0
	server.SetSource(func() (Settings, error) { calls++; return latest, nil })

	// Within the interval nothing is asked; after it, an unchanged source
	// changes nothing.
	server.Config().GetConfigForClient(nil)
	if calls != 0 {
		t.Fatalf("source asked %d times within the interval", calls)
	}
	clock = clock.Add(ReloadCheckInterval)
	before := server.Current()
	server.Config().GetConfigForClient(nil)
	if calls != 1 || server.Current() != before {
		t.Fatalf("an unchanged source: %d calls, config replaced %v", calls, server.Current() != before)
	}

	// A new keystore type and location (the PKCS12 copy of the same
	// certificate) is applied.
	latest = mustSettings(t, map[string]string{KeyKeystoreType: "PKCS12", KeyKeystoreLocation: p.path("server.p12"), KeyKeystorePassword: testPassword})
	clock = clock.Add(ReloadCheckInterval)
	server.Config().GetConfigForClient(nil)
	if server.Current() == before {
		t.Fatal("a changed source was not applied")
	}

	// A source naming a broken keystore is refused once and not retried
	// while it stays the same.
	applied := server.Current()
	latest = mustSettings(t, map[string]string{KeyKeystoreType: "PKCS12", KeyKeystoreLocation: p.path("server.p12"), KeyKeystorePassword: "wrong"})
	refusals := 0
	server.onReload = func(err error) {
		if err != nil {
			refusals++
		}
	}
	for range 3 {
		clock = clock.Add(ReloadCheckInterval)
		server.Config().GetConfigForClient(nil)
	}
	if refusals != 1 || server.Current() != applied {
		t.Fatalf("a broken source: %d refusals (want 1), config replaced %v", refusals, server.Current() != applied)
	}
}
