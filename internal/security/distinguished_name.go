package security

import (
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/cryptobyte"
	cryptobyteasn1 "golang.org/x/crypto/cryptobyte/asn1"
)

// A certificate subject is DER:
//
//	Name ::= SEQUENCE OF RelativeDistinguishedName
//	RelativeDistinguishedName ::= SET OF AttributeTypeAndValue
//	AttributeTypeAndValue ::= SEQUENCE { type OBJECT IDENTIFIER, value ANY }
//
// Java's X500Principal.getName() (RFC 2253) writes the RDNs last first,
// separated by ",", the values of a multi-valued RDN in their encoded order
// joined by "+", each as KEYWORD=value for the keywords RFC 2253 defines and
// as dotted-OID=#hex-of-the-DER-value otherwise.

// rfc2253Keywords are the attribute types Java's X500Principal names in
// RFC 2253 output; any other type is written as its dotted OID.
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// rfc2253Escaped are the characters Java escapes with a backslash anywhere
// in an RFC 2253 value.
const rfc2253Escaped = ",=+<>#;\"\\"

// distinguishedNameRDNsMax bounds the RDNs of a subject we format; real
// subjects have a handful.
const distinguishedNameRDNsMax = 256

// FormatDistinguishedName formats a DER-encoded X.509 Name (a certificate's
// RawSubject) exactly as Java's X500Principal.getName() does.
func FormatDistinguishedName(rawName []byte) (string, error) {
	input := cryptobyte.String(rawName)
	var sequence cryptobyte.String
	if !input.ReadASN1(&sequence, cryptobyteasn1.SEQUENCE) || !input.Empty() {
		return "", fmt.Errorf("security: malformed distinguished name")
	}
	var rdns []string
	for !sequence.Empty() {
		if len(rdns) == distinguishedNameRDNsMax {
			return "", fmt.Errorf("security: distinguished name has more than %d RDNs", distinguishedNameRDNsMax)
		}
		var set cryptobyte.String
		if !sequence.ReadASN1(&set, cryptobyteasn1.SET) {
			return "", fmt.Errorf("security: malformed relative distinguished name")
		}
		var values []string
		for !set.Empty() {
			var attribute cryptobyte.String
			if !set.ReadASN1(&attribute, cryptobyteasn1.SEQUENCE) {
				return "", fmt.Errorf("security: malformed attribute")
			}
			formatted, err := formatAttribute(attribute)
			if err != nil {
				return "", err
			}
			values = append(values, formatted)
		}
		if len(values) == 0 {
			return "", fmt.Errorf("security: empty relative distinguished name")
		}
		rdns = append(rdns, strings.Join(values, "+"))
	}
	var b strings.Builder
	for i := len(rdns) - 1; i >= 0; i-- {
		b.WriteString(rdns[i])
		if i > 0 {
			b.WriteByte(',')
		}
	}
	return b.String(), nil
}

// formatAttribute formats one AttributeTypeAndValue's contents.
func formatAttribute(attribute cryptobyte.String) (string, error) {
	var oid asn1.ObjectIdentifier
	if !attribute.ReadASN1ObjectIdentifier(&oid) {
		return "", fmt.Errorf("security: malformed attribute type")
	}
	var value cryptobyte.String
	var tag cryptobyteasn1.Tag
	var full cryptobyte.String
	if !attribute.ReadAnyASN1Element(&full, &tag) || !attribute.Empty() {
		return "", fmt.Errorf("security: malformed attribute value")
	}
	contents := full
	if !contents.ReadAnyASN1(&value, &tag) {
		return "", fmt.Errorf("security: malformed attribute value")
	}
	keyword, known := rfc2253Keywords[oid.String()]
	if !known || !isDirectoryString(tag) {
		name := keyword
		if !known {
			name = oid.String()
		}
		return name + "=#" + hex.EncodeToString(full), nil
	}
	return keyword + "=" + escapeRFC2253(decodeAsUTF8(value)), nil
}

// isDirectoryString is Java's AVA.isDerString(value, false): the string
// types written as text.
func isDirectoryString(tag cryptobyteasn1.Tag) bool {
	switch tag {
	case cryptobyteasn1.PrintableString, cryptobyteasn1.T61String, cryptobyteasn1.IA5String,
		cryptobyteasn1.GeneralString, 30 /* BMPString */, cryptobyteasn1.UTF8String:
		return true
	}
	return false
}

// decodeAsUTF8 reads a value's bytes as UTF-8 whatever its string type, as
// Java's AVA does, with U+FFFD for bytes that are not UTF-8.
func decodeAsUTF8(value []byte) string {
	if utf8.Valid(value) {
		return string(value)
	}
	return strings.ToValidUTF8(string(value), "\uFFFD")
}

// isPrintableStringChar is Java's DerValue.isPrintableStringChar.
func isPrintableStringChar(c rune) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.ContainsRune(" '()+,-./:=?", c)
}

// escapeRFC2253 escapes a value as Java's AVA.toRFC2253String does: a
// backslash before each special character, "\00" before a NUL (which is kept,
// as Java keeps it), and a backslash before each leading or trailing space or
// carriage return.
func escapeRFC2253(value string) string {
	var escaped strings.Builder
	for _, c := range value {
		switch {
		case strings.ContainsRune(rfc2253Escaped, c):
			escaped.WriteByte('\\')
		case c == 0 && !isPrintableStringChar(c):
			escaped.WriteString("\\00")
		}
		escaped.WriteRune(c)
	}
	runes := []rune(escaped.String())
	lead := 0
	for lead < len(runes) && (runes[lead] == ' ' || runes[lead] == '\r') {
		lead++
	}
	trail := len(runes) - 1
	for trail >= 0 && (runes[trail] == ' ' || runes[trail] == '\r') {
		trail--
	}
	var b strings.Builder
	for i, c := range runes {
		if i < lead || i > trail {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
