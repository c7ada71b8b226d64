// Command saml-go-peer is a SAML 2.0 peer from the Go ecosystem for Gatehouse's end-to-end tests
// (test/e2e/saml-go-peer.e2e.test.ts). It is our own small program over github.com/crewjam/saml,
// an implementation written independently of Gatehouse's Node libraries, and plays both roles:
//
//   - as a service provider against Gatehouse's IdP (SAML Profiles §4.1, §4.4):
//     sp-authn       a signed AuthnRequest on HTTP-Redirect (SigAlg/Signature query, Bindings §3.4.4.1)
//     sp-acs         verifies a posted Response (signatures, Destination, Audience, InResponseTo,
//                    time conditions; decrypts an EncryptedAssertion with the SP key) and prints it
//     sp-logout      a signed LogoutRequest for the HTTP-POST binding (Bindings §3.5)
//     sp-logout-done verifies the IdP's signed LogoutResponse (HTTP-POST)
//   - as an identity provider for an org SAML connection in Gatehouse's SP role:
//     idp-respond    reads Gatehouse's AuthnRequest (the redirect URL), checks it against Gatehouse's
//                    SP metadata and answers with a signed Response (encrypted when that metadata
//                    publishes an encryption key), as the form fields to POST to the ACS.
//
// Every command reads flags, prints one JSON object on stdout and exits 0; a refusal prints
// {"error": "..."} and exits 1. Nothing listens on a port: the test carries the messages over HTTP.
package main

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/beevik/etree"
	"github.com/crewjam/saml"
	dsig "github.com/russellhaering/goxmldsig"
)

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: saml-go-peer <sp-authn|sp-acs|sp-logout|sp-logout-done|idp-respond> [flags]"))
	}
	cmd, args := os.Args[1], os.Args[2:]
	var out any
	var err error
	switch cmd {
	case "sp-authn":
		out, err = spAuthn(args)
	case "sp-acs":
		out, err = spAcs(args)
	case "sp-logout":
		out, err = spLogout(args)
	case "sp-logout-done":
		out, err = spLogoutDone(args)
	case "idp-respond":
		out, err = idpRespond(args)
	default:
		err = fmt.Errorf("unknown command %q", cmd)
	}
	if err != nil {
		fail(err)
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}

func fail(err error) {
	msg := err.Error()
	var ire *saml.InvalidResponseError
	if errors.As(err, &ire) && ire.PrivateErr != nil {
		msg = ire.PrivateErr.Error()
	}
	_ = json.NewEncoder(os.Stdout).Encode(map[string]string{"error": msg})
	os.Exit(1)
}

// keyPair reads a PEM private key (PKCS#8 or PKCS#1) and a PEM certificate.
func keyPair(keyFile, certFile string) (crypto.Signer, *x509.Certificate, error) {
	kb, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, nil, err
	}
	cb, err := os.ReadFile(certFile)
	if err != nil {
		return nil, nil, err
	}
	pair, err := tls.X509KeyPair(cb, kb)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, nil, err
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, nil, errors.New("the private key cannot sign")
	}
	return signer, cert, nil
}

func metadataFile(path string) (*saml.EntityDescriptor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ed saml.EntityDescriptor
	if err := xml.Unmarshal(b, &ed); err != nil {
		return nil, fmt.Errorf("metadata %s: %w", path, err)
	}
	return &ed, nil
}

func mustURL(s string) url.URL {
	u, err := url.Parse(s)
	if err != nil {
		fail(fmt.Errorf("bad URL %q: %w", s, err))
	}
	return *u
}

// spFlags are the service provider's own settings and the IdP metadata it trusts.
type spFlags struct {
	fs                                                *flag.FlagSet
	key, cert, entityID, acs, slo, idpMetadata, relay string
}

func newSpFlags(name string) *spFlags {
	f := &spFlags{fs: flag.NewFlagSet(name, flag.ExitOnError)}
	f.fs.StringVar(&f.key, "key", "", "SP private key (PEM)")
	f.fs.StringVar(&f.cert, "cert", "", "SP certificate (PEM)")
	f.fs.StringVar(&f.entityID, "entity-id", "", "SP entity ID")
	f.fs.StringVar(&f.acs, "acs", "", "SP Assertion Consumer Service URL")
	f.fs.StringVar(&f.slo, "slo", "", "SP Single Logout URL")
	f.fs.StringVar(&f.idpMetadata, "idp-metadata", "", "file with the IdP's metadata")
	f.fs.StringVar(&f.relay, "relay", "", "RelayState")
	return f
}

func (f *spFlags) provider() (*saml.ServiceProvider, error) {
	signer, cert, err := keyPair(f.key, f.cert)
	if err != nil {
		return nil, err
	}
	md, err := metadataFile(f.idpMetadata)
	if err != nil {
		return nil, err
	}
	sp := &saml.ServiceProvider{
		EntityID:        f.entityID,
		Key:             signer,
		Certificate:     cert,
		MetadataURL:     mustURL(f.entityID),
		AcsURL:          mustURL(f.acs),
		SloURL:          mustURL(f.slo),
		IDPMetadata:     md,
		SignatureMethod: dsig.RSASHA256SignatureMethod,
		// the NameID the IdP registered for this SP (behaviour: emailAddress by default)
		AuthnNameIDFormat: saml.EmailAddressNameIDFormat,
	}
	return sp, nil
}

func spAuthn(args []string) (any, error) {
	f := newSpFlags("sp-authn")
	unsigned := f.fs.Bool("unsigned", false, "send the AuthnRequest without a signature")
	_ = f.fs.Parse(args)
	sp, err := f.provider()
	if err != nil {
		return nil, err
	}
	if *unsigned {
		sp.SignatureMethod = ""
	}
	req, err := sp.MakeAuthenticationRequest(sp.GetSSOBindingLocation(saml.HTTPRedirectBinding), saml.HTTPRedirectBinding, saml.HTTPPostBinding)
	if err != nil {
		return nil, err
	}
	u, err := req.Redirect(url.QueryEscape(f.relay), sp)
	if err != nil {
		return nil, err
	}
	return map[string]string{"url": u.String(), "id": req.ID}, nil
}

func spAcs(args []string) (any, error) {
	f := newSpFlags("sp-acs")
	response := f.fs.String("response", "", "the posted SAMLResponse (base64)")
	requestID := f.fs.String("request-id", "", "the AuthnRequest ID (empty: IdP-initiated)")
	_ = f.fs.Parse(args)
	sp, err := f.provider()
	if err != nil {
		return nil, err
	}
	ids := []string{}
	if *requestID != "" {
		ids = append(ids, *requestID)
	} else {
		sp.AllowIDPInitiated = true
	}
	raw, err := base64.StdEncoding.DecodeString(*response)
	if err != nil {
		return nil, fmt.Errorf("SAMLResponse is not base64: %w", err)
	}
	assertion, err := sp.ParseXMLResponse(raw, ids, sp.AcsURL)
	if err != nil {
		return nil, err
	}
	attrs := map[string][]string{}
	for _, st := range assertion.AttributeStatements {
		for _, a := range st.Attributes {
			for _, v := range a.Values {
				attrs[a.Name] = append(attrs[a.Name], v.Value)
			}
		}
	}
	out := map[string]any{
		"issuer":     assertion.Issuer.Value,
		"attributes": attrs,
		"encrypted":  bytes.Contains(raw, []byte("EncryptedAssertion")),
	}
	if assertion.Subject != nil && assertion.Subject.NameID != nil {
		out["name_id"] = assertion.Subject.NameID.Value
		out["name_id_format"] = assertion.Subject.NameID.Format
	}
	for _, s := range assertion.AuthnStatements {
		if s.SessionIndex != "" {
			out["session_index"] = s.SessionIndex
		}
	}
	return out, nil
}

func spLogout(args []string) (any, error) {
	f := newSpFlags("sp-logout")
	nameID := f.fs.String("name-id", "", "the NameID to log out")
	_ = f.fs.Parse(args)
	sp, err := f.provider()
	if err != nil {
		return nil, err
	}
	req, err := sp.MakeLogoutRequest(sp.GetSLOBindingLocation(saml.HTTPPostBinding), *nameID)
	if err != nil {
		return nil, err
	}
	doc := etree.NewDocument()
	doc.SetRoot(req.Element())
	b, err := doc.WriteToBytes()
	if err != nil {
		return nil, err
	}
	return map[string]string{"url": req.Destination, "id": req.ID, "saml_request": base64.StdEncoding.EncodeToString(b)}, nil
}

func spLogoutDone(args []string) (any, error) {
	f := newSpFlags("sp-logout-done")
	response := f.fs.String("response", "", "the posted SAMLResponse (base64)")
	_ = f.fs.Parse(args)
	sp, err := f.provider()
	if err != nil {
		return nil, err
	}
	if err := sp.ValidateLogoutResponseForm(*response); err != nil {
		return nil, err
	}
	raw, _ := base64.StdEncoding.DecodeString(*response)
	var resp saml.LogoutResponse
	if err := xml.Unmarshal(raw, &resp); err != nil {
		return nil, err
	}
	return map[string]string{"status": resp.Status.StatusCode.Value, "in_response_to": resp.InResponseTo, "issuer": resp.Issuer.Value}, nil
}

// oneSP answers the IdP's lookup with the one SP metadata it was given.
type oneSP struct{ md *saml.EntityDescriptor }

func (o oneSP) GetServiceProvider(_ *http.Request, id string) (*saml.EntityDescriptor, error) {
	if id != o.md.EntityID {
		return nil, os.ErrNotExist
	}
	return o.md, nil
}

func idpRespond(args []string) (any, error) {
	fs := flag.NewFlagSet("idp-respond", flag.ExitOnError)
	keyFile := fs.String("key", "", "IdP private key (PEM)")
	certFile := fs.String("cert", "", "IdP certificate (PEM)")
	entityID := fs.String("entity-id", "", "IdP entity ID: the Issuer of the Response and Assertion")
	ssoURL := fs.String("sso-url", "", "IdP SSO URL (the AuthnRequest's Destination)")
	spMetadata := fs.String("sp-metadata", "", "file with the SP's metadata")
	requestURL := fs.String("request-url", "", "the URL the SP redirected the browser to (SAMLRequest query)")
	nameID := fs.String("name-id", "", "the user's NameID (an email address)")
	given := fs.String("given-name", "", "givenName attribute")
	family := fs.String("family-name", "", "sn attribute")
	_ = fs.Parse(args)

	signer, cert, err := keyPair(*keyFile, *certFile)
	if err != nil {
		return nil, err
	}
	md, err := metadataFile(*spMetadata)
	if err != nil {
		return nil, err
	}
	idp := &saml.IdentityProvider{
		Key:                     signer,
		Signer:                  signer,
		Certificate:             cert,
		MetadataURL:             mustURL(*entityID),
		SSOURL:                  mustURL(*ssoURL),
		ServiceProviderProvider: oneSP{md},
		AssertionMaker:          saml.DefaultAssertionMaker{},
		SignatureMethod:         dsig.RSASHA256SignatureMethod,
	}
	httpReq, err := http.NewRequest(http.MethodGet, *requestURL, nil)
	if err != nil {
		return nil, err
	}
	req, err := saml.NewIdpAuthnRequest(idp, httpReq)
	if err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	now := time.Now()
	session := &saml.Session{
		ID: fmt.Sprintf("go-peer-%d", now.UnixNano()), CreateTime: now, ExpireTime: now.Add(time.Hour), Index: fmt.Sprintf("idx-%d", now.UnixNano()),
		NameID: *nameID, NameIDFormat: string(saml.EmailAddressNameIDFormat),
		UserEmail: *nameID, UserGivenName: *given, UserSurname: *family,
	}
	if err := idp.AssertionMaker.MakeAssertion(req, session); err != nil {
		return nil, err
	}
	form, err := req.PostBinding()
	if err != nil {
		return nil, err
	}
	raw, _ := base64.StdEncoding.DecodeString(form.SAMLResponse)
	return map[string]any{
		"acs": form.URL, "saml_response": form.SAMLResponse, "relay_state": form.RelayState,
		"in_response_to": req.Request.ID, "encrypted": bytes.Contains(raw, []byte("EncryptedAssertion")),
	}, nil
}

