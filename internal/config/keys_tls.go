package config

// tlsBrokerKeys are the broker keys of TLS: ssl.* keys and their listener.name.<listener>. overrides.
//
// Every ssl.* key may also be set per listener as
// listener.name.<listener>.ssl.<key> (listener name in lower case, as
// Kafka's ListenerName.configPrefix writes it); see ListenerValue. The
// keystore and truststore keys are dynamic, as in Kafka, so certificates can
// be replaced with IncrementalAlterConfigs.
var tlsBrokerKeys = []Key{
	{Name: "ssl.protocol", Type: typeString, Default: "TLSv1.3",
		Doc: "The SSL protocol used to generate the SSLContext: TLSv1.3 allows TLSv1.2 and TLSv1.3, TLSv1.2 only TLSv1.2."},
	{Name: "ssl.enabled.protocols", Type: typeList, Default: "TLSv1.2,TLSv1.3", Dynamic: true,
		Doc: "The list of protocols enabled for SSL connections."},
	{Name: "ssl.cipher.suites", Type: typeList, Default: "", Dynamic: true,
		Doc: "A list of cipher suites (IANA names). By default all the available cipher suites are supported."},
	{Name: "ssl.client.auth", Type: typeString, Default: "none", Dynamic: true, Check: oneOf("required", "requested", "none"),
		Doc: "Whether the broker requires (required), asks for (requested) or ignores (none) client certificates."},
	{Name: "ssl.endpoint.identification.algorithm", Type: typeString, Default: "https", Dynamic: true,
		Doc: "The endpoint identification algorithm to validate server hostname using server certificate; empty disables it."},
	{Name: "ssl.keystore.type", Type: typeString, Default: "JKS", Dynamic: true, Check: oneOf("JKS", "PKCS12", "PEM"),
		Doc: "The file format of the key store file: JKS, PKCS12 or PEM."},
	{Name: "ssl.keystore.location", Type: typeString, NoDefault: true, Dynamic: true,
		Doc: "The location of the key store file."},
	{Name: "ssl.keystore.password", Type: typePassword, NoDefault: true, Dynamic: true, Sensitive: true,
		Doc: "The store password for the key store file."},
	{Name: "ssl.key.password", Type: typePassword, NoDefault: true, Dynamic: true, Sensitive: true,
		Doc: "The password of the private key in the key store file or the PEM key in ssl.keystore.key."},
	{Name: "ssl.keystore.key", Type: typePassword, NoDefault: true, Dynamic: true, Sensitive: true,
		Doc: "Private key in the format specified by ssl.keystore.type (PEM: PKCS#8, optionally encrypted with ssl.key.password)."},
	{Name: "ssl.keystore.certificate.chain", Type: typePassword, NoDefault: true, Dynamic: true, Sensitive: true,
		Doc: "Certificate chain in the format specified by ssl.keystore.type (PEM: a list of X.509 certificates)."},
	{Name: "ssl.truststore.type", Type: typeString, Default: "JKS", Dynamic: true, Check: oneOf("JKS", "PKCS12", "PEM"),
		Doc: "The file format of the trust store file: JKS, PKCS12 or PEM."},
	{Name: "ssl.truststore.location", Type: typeString, NoDefault: true, Dynamic: true,
		Doc: "The location of the trust store file."},
	{Name: "ssl.truststore.password", Type: typePassword, NoDefault: true, Dynamic: true, Sensitive: true,
		Doc: "The password for the trust store file."},
	{Name: "ssl.truststore.certificates", Type: typePassword, NoDefault: true, Dynamic: true, Sensitive: true,
		Doc: "Trusted certificates in the format specified by ssl.truststore.type (PEM: X.509 certificates)."},
	{Name: "ssl.principal.mapping.rules", Type: typeString, Default: "DEFAULT",
		Doc: "Rules mapping a client certificate's distinguished name to a short name: DEFAULT and RULE:pattern/replacement/[LU], comma-separated."},
	{Name: "ssl.keymanager.algorithm", Type: typeString, Default: "SunX509", Dynamic: true,
		Doc: "Accepted for compatibility; Go's TLS needs no key manager factory."},
	{Name: "ssl.trustmanager.algorithm", Type: typeString, Default: "PKIX", Dynamic: true,
		Doc: "Accepted for compatibility; certificates are verified with PKIX path validation."},
	{Name: "ssl.secure.random.implementation", Type: typeString, NoDefault: true, Dynamic: true,
		Doc: "Accepted for compatibility; Go's TLS uses crypto/rand."},
	{Name: "ssl.allow.dn.changes", Type: typeBoolean, Default: "false",
		Doc: "Whether a reloaded keystore may change the certificate's distinguished name (refused by default)."},
	{Name: "ssl.allow.san.changes", Type: typeBoolean, Default: "false",
		Doc: "Whether a reloaded keystore may change the certificate's subject alternative names (refused by default)."},
}
