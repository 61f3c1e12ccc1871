package security

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"
	"time"
)

// subjectDER encodes rdns (in ASN.1 order) as a certificate would.
func subjectDER(t testing.TB, rdns pkix.RDNSequence) []byte {
	t.Helper()
	der, err := asn1.Marshal(rdns)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func attribute(oid asn1.ObjectIdentifier, value any) pkix.AttributeTypeAndValue {
	return pkix.AttributeTypeAndValue{Type: oid, Value: value}
}

var (
	oidCN    = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidC     = asn1.ObjectIdentifier{2, 5, 4, 6}
	oidO     = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidOU    = asn1.ObjectIdentifier{2, 5, 4, 11}
	oidDC    = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}
	oidUID   = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}
	oidEmail = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
)

func TestFormatDistinguishedNameAsJava(t *testing.T) {
	for _, c := range []struct {
		name string
		rdns pkix.RDNSequence
		want string
	}{
		{
			// new X500Principal("CN=Duke, OU=ServiceUsers, O=Org, C=US").getName()
			"kafka builder vector", pkix.RDNSequence{
				{attribute(oidC, "US")}, {attribute(oidO, "Org")}, {attribute(oidOU, "ServiceUsers")}, {attribute(oidCN, "Duke")},
			}, "CN=Duke,OU=ServiceUsers,O=Org,C=US",
		},
		{
			"special characters escaped", pkix.RDNSequence{
				{attribute(oidO, `a,b+c=d<e>f#g;h"i\j`)}, {attribute(oidCN, "Tkac, Adam")},
			}, `CN=Tkac\, Adam,O=a\,b\+c\=d\<e\>f\#g\;h\"i\\j`,
		},
		{
			"leading and trailing spaces escaped", pkix.RDNSequence{{attribute(oidCN, "  two  ")}},
			`CN=\ \ two\ \ `,
		},
		{
			"unknown attribute as OID and hex DER", pkix.RDNSequence{
				{attribute(oidEmail, asn1.RawValue{Tag: asn1.TagIA5String, Bytes: []byte("a@b.c")})}, {attribute(oidCN, "x")},
			}, "CN=x,1.2.840.113549.1.9.1=#16056140622e63",
		},
		{
			"DC and UID keywords, multi-valued RDN in encoded order", pkix.RDNSequence{
				{attribute(oidDC, asn1.RawValue{Tag: asn1.TagIA5String, Bytes: []byte("com")})},
				{attribute(oidUID, "u1"), attribute(oidCN, "n")},
			}, "CN=n+UID=u1,DC=com", // DER sorts the SET: CN (2.5.4.3) before UID
		},
		{
			"UTF-8 kept as is", pkix.RDNSequence{{attribute(oidCN, asn1.RawValue{Tag: asn1.TagUTF8String, Bytes: []byte("Jürgen")})}},
			"CN=Jürgen",
		},
		{
			"known keyword with a non-string value is hex", pkix.RDNSequence{{attribute(oidCN, asn1.RawValue{Tag: asn1.TagOctetString, Bytes: []byte{1, 2}})}},
			"CN=#04020102",
		},
	} {
		got, err := FormatDistinguishedName(subjectDER(t, c.rdns))
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func TestPrincipalOfCertificatesAsKafka(t *testing.T) {
	// DefaultKafkaPrincipalBuilderTest.testPrincipalWithSslPrincipalMapper,
	// with real certificates instead of mocked X500Principals.
	authority, err := NewAuthority("test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := NewPrincipalMapper("RULE:^CN=(.*),OU=ServiceUsers.*$/$1/L, " +
		"RULE:^CN=(.*),OU=(.*),O=(.*),L=(.*),ST=(.*),C=(.*)$/$1@$2/L, " +
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U, DEFAULT")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		subject pkix.Name
		want    string
	}{
		{pkix.Name{CommonName: "Duke", OrganizationalUnit: []string{"ServiceUsers"}, Organization: []string{"Org"}, Country: []string{"US"}}, "User:duke"},
		{pkix.Name{CommonName: "Duke", OrganizationalUnit: []string{"SME"}, Organization: []string{"mycp"}, Locality: []string{"Fulton"}, Province: []string{"MD"}, Country: []string{"US"}}, "User:duke@sme"},
		{pkix.Name{CommonName: "duke", OrganizationalUnit: []string{"JavaSoft"}, Organization: []string{"Sun Microsystems"}}, "User:DUKE"},
		{pkix.Name{OrganizationalUnit: []string{"JavaSoft"}, Organization: []string{"Sun Microsystems"}, Country: []string{"US"}}, "User:OU=JavaSoft,O=Sun Microsystems,C=US"},
	} {
		certificate, err := authority.Issue(CertificateRequest{Subject: c.subject, ValidFor: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		state := verifiedState(certificate.Leaf)
		got, err := PrincipalOf(state, mapper)
		if err != nil || got != c.want {
			t.Errorf("subject %v: got %q, %v; want %q", c.subject, got, err, c.want)
		}
	}
	if got, _ := PrincipalOf(verifiedState(nil), mapper); got != AnonymousPrincipal {
		t.Errorf("no client certificate: got %q, want %q", got, AnonymousPrincipal)
	}
}

func FuzzFormatDistinguishedName(f *testing.F) {
	f.Add(subjectDER(f, pkix.RDNSequence{{attribute(oidC, "US")}, {attribute(oidCN, " Duke#, ")}}))
	f.Add(subjectDER(f, pkix.RDNSequence{{attribute(oidEmail, "a@b"), attribute(oidUID, "x")}}))
	f.Add([]byte{0x30, 0x00})
	f.Add([]byte{0x30, 0x03, 0x31, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, der []byte) {
		FormatDistinguishedName(der)
	})
}
