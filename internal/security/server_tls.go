package security

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// ReloadCheckInterval is how often, at most, a ServerTLS looks at its
// keystore and truststore files for changes: one stat per file per interval,
// done by the first handshake after it has passed.
const ReloadCheckInterval = time.Second

// ServerTLS is the TLS side of one listener. Its Config hands every new
// handshake the current keystore and truststore, so they can be replaced
// (their files rewritten, or the listener's ssl.* keys altered) without a
// restart and without touching connections in flight.
//
// A replacement is checked as Kafka checks one: the new keystore must load,
// and its leaf certificate must keep the old subject and subject alternative
// names; otherwise the old material stays in use and the error is reported.
type ServerTLS struct {
	fsys     vfs.FS
	now      func() time.Time
	onReload func(err error)

	mu struct {
		sync.Mutex
		// source, when set, gives the listener's settings as they are now
		// (dynamic configs included); a change is applied with Update.
		source func() (Settings, error)
		// refused are the latest source settings Update refused, not tried
		// again until the source changes once more.
		refused  *Settings
		settings Settings
		config   *tls.Config
		mapper   *PrincipalMapper
		// files are the stamps of the keystore and truststore files the
		// current config was built from.
		files     []fileStamp
		checkedAt time.Time
	}
}

// fileStamp identifies a file's content cheaply (size and modification
// time) and exactly (a hash, taken when the cheap stamp changes).
type fileStamp struct {
	name     string
	size     int64
	modified time.Time
	digest   [sha256.Size]byte
}

// NewServerTLS loads s for a listener. onReload, when set, is told the
// outcome of every automatic reload (nil for success).
func NewServerTLS(fsys vfs.FS, s Settings, onReload func(err error)) (*ServerTLS, error) {
	server := &ServerTLS{fsys: fsys, now: time.Now, onReload: onReload}
	config, mapper, files, err := server.build(s)
	if err != nil {
		return nil, err
	}
	server.mu.settings, server.mu.config, server.mu.mapper, server.mu.files = s, config, mapper, files
	server.mu.checkedAt = server.now()
	return server, nil
}

// build loads everything s names.
func (s *ServerTLS) build(settings Settings) (*tls.Config, *PrincipalMapper, []fileStamp, error) {
	mapper, err := NewPrincipalMapper(settings.PrincipalMappingRules)
	if err != nil {
		return nil, nil, nil, err
	}
	var files []fileStamp
	for _, name := range []string{settings.KeystoreLocation, settings.TruststoreLocation} {
		if name == "" {
			continue
		}
		stamp, err := s.stamp(name, true)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
		files = append(files, stamp)
	}
	certificate, err := loadKeystore(s.fsys, settings)
	if err != nil {
		return nil, nil, nil, err
	}
	roots, err := loadTruststore(s.fsys, settings)
	if err != nil {
		return nil, nil, nil, err
	}
	config, err := buildServerConfig(settings, certificate, roots)
	if err != nil {
		return nil, nil, nil, err
	}
	return config, mapper, files, nil
}

// stamp reads a file's stamp; with digest it also hashes its content.
func (s *ServerTLS) stamp(name string, digest bool) (fileStamp, error) {
	info, err := s.fsys.Stat(name)
	if err != nil {
		return fileStamp{}, err
	}
	stamp := fileStamp{name: name, size: info.Size(), modified: info.ModTime()}
	if digest {
		data, err := readStoreFile(s.fsys, name, name)
		if err != nil {
			return fileStamp{}, err
		}
		stamp.digest = sha256.Sum256(data)
	}
	return stamp, nil
}

// Config is the listener's *tls.Config: each handshake gets the current
// material through GetConfigForClient.
func (s *ServerTLS) Config() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return s.current(), nil
		},
	}
}

// current returns the config in force, first reloading changed files when
// ReloadCheckInterval has passed since the last look.
func (s *ServerTLS) current() *tls.Config {
	s.mu.Lock()
	now := s.now()
	if now.Sub(s.mu.checkedAt) < ReloadCheckInterval {
		config := s.mu.config
		s.mu.Unlock()
		return config
	}
	s.mu.checkedAt = now
	changed := s.filesChangedLocked()
	config := s.mu.config
	settings := s.mu.settings
	source, refused := s.mu.source, s.mu.refused
	s.mu.Unlock()
	fromSource := false
	if source != nil {
		latest, err := source()
		if err == nil && !reflect.DeepEqual(latest, settings) && (refused == nil || !reflect.DeepEqual(latest, *refused)) {
			settings, changed, fromSource = latest, true, true
		}
	}
	if changed {
		err := s.Update(settings)
		if err != nil && fromSource {
			s.mu.Lock()
			s.mu.refused = &settings
			s.mu.Unlock()
		}
		if s.onReload != nil {
			s.onReload(err)
		}
		return s.Current()
	}
	return config
}

// SetSource makes the listener follow source: every ReloadCheckInterval
// at most, a handshake compares its settings with the ones in force and
// applies a change (an IncrementalAlterConfigs of the listener's ssl.*
// keys) as Update does. A refused change is reported to onReload and tried
// again at the next interval.
func (s *ServerTLS) SetSource(source func() (Settings, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.source = source
}

// Current is the config in force, without looking for changes.
func (s *ServerTLS) Current() *tls.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.config
}

// filesChangedLocked reports whether a keystore or truststore file differs
// from the one the current config was built from.
func (s *ServerTLS) filesChangedLocked() bool {
	for _, old := range s.mu.files {
		stamp, err := s.stamp(old.name, false)
		if err != nil {
			// Missing for now (being replaced): try again next interval.
			continue
		}
		if stamp.size == old.size && stamp.modified.Equal(old.modified) {
			continue
		}
		stamp, err = s.stamp(old.name, true)
		if err != nil {
			continue
		}
		if stamp.digest != old.digest {
			return true
		}
		// Touched but unchanged: remember the new stamp and move on.
		for i := range s.mu.files {
			if s.mu.files[i].name == old.name {
				s.mu.files[i] = stamp
			}
		}
	}
	return false
}

// Update replaces the listener's settings (IncrementalAlterConfigs of its
// ssl.* keys, or a changed file): the new material is loaded and checked
// first, and on any error the old stays in force.
func (s *ServerTLS) Update(settings Settings) error {
	config, mapper, files, err := s.build(settings)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := sameIdentity(s.mu.config, config, settings); err != nil {
		return err
	}
	s.mu.settings, s.mu.config, s.mu.mapper, s.mu.files = settings, config, mapper, files
	return nil
}

// sameIdentity refuses a new keystore whose leaf certificate names a
// different subject or different subject alternative names, as Kafka does
// unless ssl.allow.dn.changes / ssl.allow.san.changes are set.
func sameIdentity(old, new *tls.Config, settings Settings) error {
	oldLeaf, newLeaf := leafOf(old), leafOf(new)
	if oldLeaf == nil || newLeaf == nil {
		return nil
	}
	if !settings.AllowDNChanges && !bytes.Equal(oldLeaf.RawSubject, newLeaf.RawSubject) {
		return fmt.Errorf("%w: the new keystore's certificate has subject %s, the old one %s", ErrInvalidConfig, newLeaf.Subject, oldLeaf.Subject)
	}
	if !settings.AllowSANChanges && (!slices.Equal(oldLeaf.DNSNames, newLeaf.DNSNames) || !slices.EqualFunc(oldLeaf.IPAddresses, newLeaf.IPAddresses, func(a, b net.IP) bool { return a.Equal(b) })) {
		return fmt.Errorf("%w: the new keystore's certificate has different subject alternative names", ErrInvalidConfig)
	}
	return nil
}

func leafOf(config *tls.Config) *x509.Certificate {
	if config == nil || len(config.Certificates) == 0 {
		return nil
	}
	return config.Certificates[0].Leaf
}

// Principal is the Kafka principal of a handshake: "User:" and the mapped
// subject of the verified client certificate, or "User:ANONYMOUS" without one.
func (s *ServerTLS) Principal(state tls.ConnectionState) (string, error) {
	s.mu.Lock()
	mapper := s.mu.mapper
	s.mu.Unlock()
	return PrincipalOf(state, mapper)
}

// PrincipalOf maps the verified client certificate of state through mapper.
func PrincipalOf(state tls.ConnectionState, mapper *PrincipalMapper) (string, error) {
	if len(state.VerifiedChains) == 0 || len(state.VerifiedChains[0]) == 0 {
		return AnonymousPrincipal, nil
	}
	distinguishedName, err := FormatDistinguishedName(state.VerifiedChains[0][0].RawSubject)
	if err != nil {
		return "", err
	}
	name, err := mapper.Name(distinguishedName)
	if err != nil {
		return "", err
	}
	return "User:" + name, nil
}

// AnonymousPrincipal is Kafka's principal of an unauthenticated connection.
const AnonymousPrincipal = "User:ANONYMOUS"
