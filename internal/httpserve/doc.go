// Package httpserve is the small HTTP layer the node's HTTP services (the
// schema registry, the HTTP proxy and later the console) share: listener
// parsing, bounded requests, timeouts, JSON answers and errors, graceful
// shutdown, and the seam where authentication plugs in.
//
// It imports nothing internal. Services hand it an http.Handler; it owns the
// sockets.
//
// Listener syntax is Confluent's: a comma-separated list of
// scheme://host:port entries, scheme http or https (served with
// Config.TLS). An empty host binds every interface; port 0 asks for an
// ephemeral port.
//
// Limits, each with the name of the key that sets it where one exists:
//
//	request body      Config.MaxBodyBytes   (schema.registry.max.request.bytes)
//	request headers   Config.MaxHeaderBytes (1 MiB, net/http's default)
//	header read time  Config.ReadHeaderTimeout
//	whole request     Config.ReadTimeout / WriteTimeout
//	idle keep-alive   Config.IdleTimeout
//
// Authentication: Config.Authenticator, when set, is asked for every request
// before the handler runs and either names the principal or refuses with
// 401 (WWW-Authenticate: Basic realm="samsa" unless Config.Realm says
// otherwise, error code 40101 "Unauthorized"). When it is nil every request runs as the anonymous principal; nothing
// here pretends to check credentials.
package httpserve
