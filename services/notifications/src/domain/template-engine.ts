/**
 * @module @gatehouse/notifications/domain/template-engine
 * The placeholder-only template language of email templates (behaviour.md §5.5) lives in
 * @gatehouse/delivery, because admin checks a template's syntax when it is stored.
 */
export { escapeHtml, parseTemplate, renderTemplate, validateTemplateSyntax, type TemplatePart } from '@gatehouse/delivery';
