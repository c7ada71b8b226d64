/**
 * @module test/e2e/login-page-screenshots
 * Re-creates docs/login-page/*.png: one screenshot of each screen of the hosted login page, taken
 * in Debian's chromium against an all-in-one deployment (SQLite, an SMTP sink, MFA on), walking the
 * same flows as login-page.e2e.test.ts. Every screen is also checked with axe-core; the script
 * fails when one has a serious or critical violation or the CSP reports one.
 *
 *     npx node test/e2e/login-page-screenshots.ts
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDeployment, startSmtpSink } from '@gatehouse/testing';
import { launchChromium } from './passkey-browser.ts';
import { address, NEW_PASSWORD, PASSWORD } from './email-support.ts';
import { forgotAndReset, LoginPageDriver, loginPageFlags, magicLink, passwordLogin, reportScreens, signUpWithTotp, startLogoServer, submitSignup, TITLES } from './login-page-support.ts';

const ORG = 'Acme';
const OUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'login-page');

mkdirSync(OUT, { recursive: true });
const [sink, logo, browser] = await Promise.all([startSmtpSink(), startLogoServer(), launchChromium()]);
const d = await startDeployment('all', { urlHost: 'localhost', mfa: true, flags: loginPageFlags(sink, ORG, logo.url) });
let failed = false;
try {
  const drv = await LoginPageDriver.open(browser, d.url, OUT);
  const email = address('ada');
  // login, signup, the TOTP offer, signed in
  await signUpWithTotp(drv, ORG, email, PASSWORD, true);
  await drv.click('Sign out');
  await drv.screen(TITLES.login(ORG));
  // a refused password: the announced error
  await passwordLogin(drv, ORG, email, 'Wr0ng!password');
  await drv.alert();
  await drv.screen(TITLES.login(ORG), 'login-error');
  // the TOTP challenge and its recovery-code form
  await drv.fill('Password', PASSWORD);
  await drv.click('Sign in');
  await drv.screen(TITLES.totp, 'mfa-totp');
  await drv.click('Use a recovery code');
  await drv.screen(TITLES.totp, 'mfa-recovery-code');
  // forgot → inbox → reset (from the emailed link)
  await forgotAndReset(drv, sink, ORG, email, NEW_PASSWORD, true);
  await drv.screen(TITLES.login(ORG), 'password-updated');
  // magic link, and the MFA offer without the TOTP part (the link's redirect)
  await magicLink(drv, sink, ORG, address('grace'), true);
  // issue 33 §2: the account console from the signed-in screen, and its TOTP enrolment
  await drv.follow('Manage your account');
  await drv.screen('Your account', 'account');
  await drv.click('Set up an authenticator app');
  await drv.screen('Your account', 'account-totp');
  await drv.click('Cancel');
  // the email OTP screen, chosen in the offer
  await drv.click('Sign out');
  await drv.screen(TITLES.login(ORG));
  await drv.goto('/app/signup');
  await drv.screen(TITLES.signup);
  await submitSignup(drv, address('linus'), PASSWORD);
  await drv.click('Codes by email');
  await drv.screen(TITLES.emailOtp, 'mfa-email-otp');

  failed = await reportScreens(drv, OUT);
} finally {
  await browser.close();
  await d.stop();
  await sink.close();
  await logo.close();
}
if (failed) process.exit(1);
