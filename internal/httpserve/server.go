package httpserve

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Defaults for the Config bounds left zero.
const (
	DefaultMaxBodyBytes      = 16 << 20
	DefaultMaxHeaderBytes    = 1 << 20
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 60 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
)

// DefaultRealm is the realm a 401 answer names when Config.Realm is empty.
const DefaultRealm = "samsa"

// Principal names who sent a request, in Kafka's "User:name" form.
type Principal string

// Anonymous is the principal of requests when no Authenticator is set, as
// Kafka names unauthenticated PLAINTEXT clients.
const Anonymous Principal = "User:ANONYMOUS"

// Authenticator checks a request's credentials. It returns the principal,
// or an error; the error's text is never sent to the client or logged with
// the credentials.
type Authenticator interface {
	Authenticate(r *http.Request) (Principal, error)
}

// Config describes one HTTP service.
type Config struct {
	// Name names the service in logs and errors ("schema registry").
	Name      string
	Listeners []Listener
	// MaxBodyBytes bounds every request body; reading past it fails the
	// read with *http.MaxBytesError (ReadJSON answers ErrBodyTooLarge).
	MaxBodyBytes      int64
	MaxHeaderBytes    int
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// Authenticator, when set, runs before every request; nil lets every
	// request through as Anonymous.
	Authenticator Authenticator
	// Realm is the realm of the 401 answer's WWW-Authenticate header;
	// empty means DefaultRealm.
	Realm string
	// ErrorContentType is the content type of the 401 answer.
	ErrorContentType string
	// TLS serves the https listeners; Serve refuses https listeners
	// without it.
	TLS    *tls.Config
	Logger *slog.Logger
}

// Server serves one handler on every configured listener.
type Server struct {
	config    Config
	http      *http.Server
	listeners []net.Listener
	wait      sync.WaitGroup
}

type principalKey struct{}

// PrincipalOf returns the principal the server attached to a request.
func PrincipalOf(r *http.Request) Principal {
	if p, ok := r.Context().Value(principalKey{}).(Principal); ok {
		return p
	}
	return Anonymous
}

// Serve binds every listener and serves handler on them until Shutdown. A
// bind failure closes the listeners already bound and returns the error.
func Serve(config Config, handler http.Handler) (*Server, error) {
	if config.MaxBodyBytes <= 0 {
		config.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if config.MaxHeaderBytes <= 0 {
		config.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if config.ReadHeaderTimeout <= 0 {
		config.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if config.ReadTimeout <= 0 {
		config.ReadTimeout = DefaultReadTimeout
	}
	if config.WriteTimeout <= 0 {
		config.WriteTimeout = DefaultWriteTimeout
	}
	if config.IdleTimeout <= 0 {
		config.IdleTimeout = DefaultIdleTimeout
	}
	if config.Realm == "" {
		config.Realm = DefaultRealm
	}
	if config.Logger == nil {
		config.Logger = slog.Default()
	}
	s := &Server{config: config}
	s.http = &http.Server{
		Handler:           s.wrap(handler),
		MaxHeaderBytes:    config.MaxHeaderBytes,
		ReadHeaderTimeout: config.ReadHeaderTimeout,
		ReadTimeout:       config.ReadTimeout,
		WriteTimeout:      config.WriteTimeout,
		IdleTimeout:       config.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(config.Logger.Handler(), slog.LevelWarn),
	}
	if AnyHTTPS(config.Listeners) && config.TLS == nil {
		return nil, errors.New(config.Name + ": https listeners need TLS settings")
	}
	for _, l := range config.Listeners {
		ln, err := net.Listen("tcp", l.Address)
		if err != nil {
			for _, bound := range s.listeners {
				bound.Close()
			}
			return nil, err
		}
		if l.Scheme == "https" {
			ln = tls.NewListener(ln, config.TLS)
		}
		s.listeners = append(s.listeners, ln)
	}
	for _, ln := range s.listeners {
		s.wait.Add(1)
		go func() {
			defer s.wait.Done()
			if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				config.Logger.Error(config.Name+" listener stopped", "address", ln.Addr().String(), "err", err)
			}
		}()
	}
	return s, nil
}

// wrap bounds the body, authenticates, and recovers a handler panic into a
// 500 so one bad request never stops the service.
func (s *Server) wrap(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if recovered := recover(); recovered != nil {
				if recovered == http.ErrAbortHandler {
					panic(recovered)
				}
				s.config.Logger.Error(s.config.Name+" handler panic", "method", r.Method, "path", r.URL.Path, "panic", recovered)
				WriteError(w, http.StatusInternalServerError, s.config.ErrorContentType, 50001, "internal error")
			}
		}()
		r.Body = http.MaxBytesReader(w, r.Body, s.config.MaxBodyBytes)
		principal := Anonymous
		if s.config.Authenticator != nil {
			p, err := s.config.Authenticator.Authenticate(r)
			if err != nil {
				w.Header().Set("WWW-Authenticate", `Basic realm="`+s.config.Realm+`"`)
				WriteError(w, http.StatusUnauthorized, s.config.ErrorContentType, 40101, "Unauthorized")
				return
			}
			principal = p
		}
		handler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, principal)))
	})
}

// Addrs are the bound addresses, in the order of Config.Listeners.
func (s *Server) Addrs() []net.Addr {
	out := make([]net.Addr, len(s.listeners))
	for i, ln := range s.listeners {
		out[i] = ln.Addr()
	}
	return out
}

// Shutdown stops accepting, lets in-flight requests finish until ctx ends,
// then closes what is left.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, s.http.Close())
	}
	s.wait.Wait()
	return err
}
