/**
 * @module admin/graphql/deprecated
 * The types of Authorizer's deprecated admin operations (`_env`, `_update_env`, `_admin_signup`,
 * `_generate_jwt_keys`). They always fail with `unimplemented` (graphql.md §1.3), but their input
 * types keep Authorizer's fields so that ordinary validation runs first and a well-formed call
 * reaches the fixed error (graphql.md §3.2). Configuration comes only from flags (spec §1).
 */

/** SDL fragment of admin/graphql/schema.ts. */
export const DEPRECATED_TYPES_SDL = `
  type Env {
    ACCESS_TOKEN_EXPIRY_TIME: String
    ADMIN_SECRET: String
    DATABASE_NAME: String
    DATABASE_URL: String
    DATABASE_TYPE: String
    DATABASE_USERNAME: String
    DATABASE_PASSWORD: String
    DATABASE_HOST: String
    DATABASE_PORT: String
    CLIENT_ID: String!
    CLIENT_SECRET: String!
    CUSTOM_ACCESS_TOKEN_SCRIPT: String
    SMTP_HOST: String
    SMTP_PORT: String
    SMTP_USERNAME: String
    SMTP_PASSWORD: String
    SMTP_LOCAL_NAME: String
    SENDER_EMAIL: String
    SENDER_NAME: String
    JWT_TYPE: String
    JWT_SECRET: String
    JWT_PRIVATE_KEY: String
    JWT_PUBLIC_KEY: String
    ALLOWED_ORIGINS: [String!]
    APP_URL: String
    REDIS_URL: String
    RESET_PASSWORD_URL: String
    DISABLE_EMAIL_VERIFICATION: Boolean!
    DISABLE_BASIC_AUTHENTICATION: Boolean!
    DISABLE_MOBILE_BASIC_AUTHENTICATION: Boolean!
    DISABLE_MAGIC_LINK_LOGIN: Boolean!
    DISABLE_LOGIN_PAGE: Boolean!
    DISABLE_SIGN_UP: Boolean!
    DISABLE_REDIS_FOR_ENV: Boolean!
    DISABLE_STRONG_PASSWORD: Boolean!
    DISABLE_MULTI_FACTOR_AUTHENTICATION: Boolean!
    ENFORCE_MULTI_FACTOR_AUTHENTICATION: Boolean!
    ROLES: [String!]
    PROTECTED_ROLES: [String!]
    DEFAULT_ROLES: [String!]
    JWT_ROLE_CLAIM: String
    GOOGLE_CLIENT_ID: String
    GOOGLE_CLIENT_SECRET: String
    GITHUB_CLIENT_ID: String
    GITHUB_CLIENT_SECRET: String
    FACEBOOK_CLIENT_ID: String
    FACEBOOK_CLIENT_SECRET: String
    LINKEDIN_CLIENT_ID: String
    LINKEDIN_CLIENT_SECRET: String
    APPLE_CLIENT_ID: String
    APPLE_CLIENT_SECRET: String
    DISCORD_CLIENT_ID: String
    DISCORD_CLIENT_SECRET: String
    TWITTER_CLIENT_ID: String
    TWITTER_CLIENT_SECRET: String
    MICROSOFT_CLIENT_ID: String
    MICROSOFT_CLIENT_SECRET: String
    MICROSOFT_ACTIVE_DIRECTORY_TENANT_ID: String
    TWITCH_CLIENT_ID: String
    TWITCH_CLIENT_SECRET: String
    ROBLOX_CLIENT_ID: String
    ROBLOX_CLIENT_SECRET: String
    ORGANIZATION_NAME: String
    ORGANIZATION_LOGO: String
    APP_COOKIE_SECURE: Boolean!
    ADMIN_COOKIE_SECURE: Boolean!
    DEFAULT_AUTHORIZE_RESPONSE_TYPE: String
    DEFAULT_AUTHORIZE_RESPONSE_MODE: String
    DISABLE_PLAYGROUND: Boolean!
    DISABLE_MAIL_OTP_LOGIN: Boolean!
    DISABLE_TOTP_LOGIN: Boolean!
  }

  type GenerateJWTKeysResponse {
    secret: String
    public_key: String
    private_key: String
  }

  input AdminSignupRequest {
    admin_secret: String!
  }

  input GenerateJWTKeysRequest {
    type: String!
  }

  input UpdateEnvRequest {
    ACCESS_TOKEN_EXPIRY_TIME: String
    ADMIN_SECRET: String
    CUSTOM_ACCESS_TOKEN_SCRIPT: String
    OLD_ADMIN_SECRET: String
    SMTP_HOST: String
    SMTP_PORT: String
    SMTP_USERNAME: String
    SMTP_PASSWORD: String
    SMTP_LOCAL_NAME: String
    SENDER_EMAIL: String
    SENDER_NAME: String
    JWT_TYPE: String
    JWT_SECRET: String
    JWT_PRIVATE_KEY: String
    JWT_PUBLIC_KEY: String
    ALLOWED_ORIGINS: [String!]
    APP_URL: String
    RESET_PASSWORD_URL: String
    APP_COOKIE_SECURE: Boolean
    ADMIN_COOKIE_SECURE: Boolean
    DISABLE_EMAIL_VERIFICATION: Boolean
    DISABLE_BASIC_AUTHENTICATION: Boolean
    DISABLE_MOBILE_BASIC_AUTHENTICATION: Boolean
    DISABLE_MAGIC_LINK_LOGIN: Boolean
    DISABLE_LOGIN_PAGE: Boolean
    DISABLE_SIGN_UP: Boolean
    DISABLE_REDIS_FOR_ENV: Boolean
    DISABLE_STRONG_PASSWORD: Boolean
    DISABLE_MULTI_FACTOR_AUTHENTICATION: Boolean
    ENFORCE_MULTI_FACTOR_AUTHENTICATION: Boolean
    ROLES: [String!]
    PROTECTED_ROLES: [String!]
    DEFAULT_ROLES: [String!]
    JWT_ROLE_CLAIM: String
    GOOGLE_CLIENT_ID: String
    GOOGLE_CLIENT_SECRET: String
    GITHUB_CLIENT_ID: String
    GITHUB_CLIENT_SECRET: String
    FACEBOOK_CLIENT_ID: String
    FACEBOOK_CLIENT_SECRET: String
    LINKEDIN_CLIENT_ID: String
    LINKEDIN_CLIENT_SECRET: String
    APPLE_CLIENT_ID: String
    APPLE_CLIENT_SECRET: String
    DISCORD_CLIENT_ID: String
    DISCORD_CLIENT_SECRET: String
    TWITTER_CLIENT_ID: String
    TWITTER_CLIENT_SECRET: String
    MICROSOFT_CLIENT_ID: String
    MICROSOFT_CLIENT_SECRET: String
    MICROSOFT_ACTIVE_DIRECTORY_TENANT_ID: String
    TWITCH_CLIENT_ID: String
    TWITCH_CLIENT_SECRET: String
    ROBLOX_CLIENT_ID: String
    ROBLOX_CLIENT_SECRET: String
    ORGANIZATION_NAME: String
    ORGANIZATION_LOGO: String
    DEFAULT_AUTHORIZE_RESPONSE_TYPE: String
    DEFAULT_AUTHORIZE_RESPONSE_MODE: String
    DISABLE_PLAYGROUND: Boolean
    DISABLE_MAIL_OTP_LOGIN: Boolean
    DISABLE_TOTP_LOGIN: Boolean
  }
`;
