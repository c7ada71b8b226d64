/**
 * @module @gatehouse/testing
 * Helpers to start Gatehouse in either mode on free ports, and clients for its three surfaces.
 */
export { freePort, waitForHttp } from './ports.ts';
export { GATEHOUSE_BIN, REPO_ROOT, runGatehouse, spawnGatehouse, type GatehouseProcess } from './process.ts';
export { MACHINE, startDeployment, type Deployment, type Mode, type StartOptions } from './deployment.ts';
export { extractLinks, startSmtpSink, type SinkMail, type SmtpSink, type SmtpSinkOptions } from './smtp-sink.ts';
export { parseMail, type ParsedMail } from './mime.ts';
export {
  startTwilioSink, TWILIO_TEST_CREDENTIALS, type SmsMessage, type TwilioSink, type TwilioSinkOptions,
} from './twilio-sink.ts';
export { FERRETDB_BIN, startFerretDb, type FerretDb } from './ferretdb.ts';
export { OPENFGA_BIN, startOpenFga, type OpenFgaOptions, type OpenFgaServer } from './openfga.ts';
export { caAndServer, selfSigned, type KeyPair } from './certs.ts';
export { createSamlIdp, redirectOctetString, type ResponseOverrides, type SamlIdpOptions, type SamlUser, type TestSamlIdp } from './saml-idp.ts';
export { startOidcIdp, type OidcIdpClient, type TestOidcIdp } from './oidc-idp.ts';
export { flipOneBit } from './tamper.ts';
export { pendingStartProcesses, stopAbandonedStarts } from './starts.ts';
