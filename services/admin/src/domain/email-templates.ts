/**
 * @module @gatehouse/admin/domain/email-templates
 * Email template administration (behaviour.md §5.5): one template per event, placeholder-only
 * syntax checked on add and update, and the lookup the notifications worker renders with.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '@gatehouse/errors';
import { validateTemplateSyntax } from '@gatehouse/delivery';
import type { EmailTemplateRecord } from '../storage/ports.ts';
import type { AdminDomain } from './deps.ts';
import { EMAIL_TEMPLATE_EVENTS, isUuid, type AuditOf } from './events.ts';
import { pageWindow, paginationOf, type PaginationInput } from '@gatehouse/contracts/pagination';

/** behaviour.md §9 */
export const TEMPLATE_ADDED = 'Email template added successfully';
export const TEMPLATE_UPDATED = 'Email template updated successfully.';
export const TEMPLATE_DELETED = 'Email template deleted successfully';
const TEMPLATE_EXISTS = 'an email template for this event already exists';
/** behaviour.md §10 sizes: a template body stays well inside the 1 MiB request. */
const MAX_TEMPLATE_CHARS = 256 * 1024;
const MAX_SUBJECT_CHARS = 998;

export interface TemplateInput {
  id?: string | null;
  eventName?: string | null;
  subject?: string | null;
  template?: string | null;
  design?: string | null;
}

function eventOf(name: string | null | undefined): string {
  const n = (name ?? '').trim();
  if (!EMAIL_TEMPLATE_EVENTS.includes(n)) throw new AppError('invalid_argument', `invalid event name ${name ?? ''}`);
  return n;
}

function subjectOf(s: string | null | undefined): string {
  if (!s || s.trim() === '') throw new AppError('invalid_argument', 'subject is required');
  if (s.length > MAX_SUBJECT_CHARS) throw new AppError('invalid_argument', `subject must be at most ${MAX_SUBJECT_CHARS} characters`);
  validateTemplateSyntax(s);
  return s;
}

function templateOf(t: string | null | undefined): string {
  if (!t || t.trim() === '') throw new AppError('invalid_argument', 'template is required');
  if (t.length > MAX_TEMPLATE_CHARS) throw new AppError('invalid_argument', 'template is too large');
  validateTemplateSyntax(t);
  return t;
}

function designOf(d: string | null | undefined): string {
  if ((d ?? '').length > MAX_TEMPLATE_CHARS) throw new AppError('invalid_argument', 'design is too large');
  return d ?? '';
}

async function existing(d: AdminDomain, id: string | null | undefined): Promise<EmailTemplateRecord> {
  const key = (id ?? '').trim();
  if (key === '') throw new AppError('invalid_argument', 'email template ID required');
  const t = isUuid(key) ? await d.store.emailTemplates.get(key.toLowerCase()) : null;
  if (!t) throw new AppError('not_found', 'email template not found');
  return t;
}

/**
 * @throws AppError `invalid_argument` (`invalid event name <x>`, `subject is required`, `template is required`,
 *   `unsupported template syntax: <snippet>`), `already_exists` `an email template for this event already exists`
 */
export async function addEmailTemplate(d: AdminDomain, audit: AuditOf, input: TemplateInput): Promise<void> {
  const now = d.now();
  const t: EmailTemplateRecord = {
    id: randomUUID(), eventName: eventOf(input.eventName), subject: subjectOf(input.subject), template: templateOf(input.template),
    design: designOf(input.design), createdAt: now, updatedAt: now,
  };
  await d.store.transaction(async (tx) => {
    if (!(await tx.emailTemplates.insert(t))) throw new AppError('already_exists', TEMPLATE_EXISTS);
    tx.events.emit('audit.recorded', audit('admin.email_template_created', { resourceType: 'email_template', resourceId: t.id, details: { event_name: t.eventName } }));
  });
}

/** @throws AppError as {@link addEmailTemplate}, `not_found` `email template not found` */
export async function updateEmailTemplate(d: AdminDomain, audit: AuditOf, input: TemplateInput): Promise<void> {
  const current = await existing(d, input.id);
  const next = { ...current };
  const changed: string[] = [];
  if (input.eventName != null) { next.eventName = eventOf(input.eventName); changed.push('event_name'); }
  if (input.subject != null) { next.subject = subjectOf(input.subject); changed.push('subject'); }
  if (input.template != null) { next.template = templateOf(input.template); changed.push('template'); }
  if (input.design != null) { next.design = designOf(input.design); changed.push('design'); }
  next.updatedAt = d.now();
  await d.store.transaction(async (tx) => {
    const r = await tx.emailTemplates.update(next);
    if (r === 'missing') throw new AppError('not_found', 'email template not found');
    if (r === 'conflict') throw new AppError('already_exists', TEMPLATE_EXISTS);
    tx.events.emit('audit.recorded', audit('admin.email_template_updated', { resourceType: 'email_template', resourceId: next.id, details: { changed_fields: changed } }));
  });
}

/** @throws AppError `invalid_argument` `email template ID required`, `not_found` `email template not found` */
export async function deleteEmailTemplate(d: AdminDomain, audit: AuditOf, id: string | null | undefined): Promise<void> {
  const t = await existing(d, id);
  await d.store.transaction(async (tx) => {
    if (!(await tx.emailTemplates.delete(t.id))) throw new AppError('not_found', 'email template not found');
    tx.events.emit('audit.recorded', audit('admin.email_template_deleted', { resourceType: 'email_template', resourceId: t.id, details: { event_name: t.eventName } }));
  });
}

/** Templates, newest first, §10 pagination. */
export async function listEmailTemplates(d: AdminDomain, pagination: PaginationInput | null | undefined) {
  const w = pageWindow(pagination);
  const page = await d.store.emailTemplates.list(w);
  return { emailTemplates: page.rows, pagination: paginationOf(w, page.total) };
}
