// Package security builds what listeners and clients need to speak TLS from
// Kafka's ssl.* configuration, and turns a verified client certificate into
// the Kafka principal the authorizer sees.
//
// It imports nothing internal: callers hand it the ssl.* properties of one
// listener (already resolved through the listener.name.<listener>. prefix)
// as a lookup function, and get back a *tls.Config.
//
// Keystores and truststores (ssl.keystore.type / ssl.truststore.type):
//
//	PEM     ssl.keystore.location is a PEM file holding the private key
//	        (PKCS#8, optionally encrypted with ssl.key.password, or PKCS#1 /
//	        SEC1) and the certificate chain, leaf first; or the key and chain
//	        are inline in ssl.keystore.key and ssl.keystore.certificate.chain.
//	        A PEM truststore is ssl.truststore.location or the inline
//	        ssl.truststore.certificates, one or more CERTIFICATE blocks.
//	PKCS12  the file is a PKCS#12 archive protected by the store password.
//	JKS     Kafka's default type: a Java KeyStore; the private key entry is
//	        protected by ssl.key.password, or the store password when unset.
//
// Principals: a client certificate's subject is formatted as Java's
// X500Principal.getName() does (RFC 2253, see FormatDistinguishedName), then
// ssl.principal.mapping.rules (see PrincipalMapper) turn it into the name of
// "User:<name>".
package security
