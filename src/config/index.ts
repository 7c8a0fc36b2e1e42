export {
  CONFIG_FILE,
  type Config,
  type ConfigOverrides,
  displayValue,
  type LoadConfigOptions,
  loadConfig,
  type SettingSource,
} from './load.js';
export {
  MAX_RETENTION_DAYS,
  type SettingDefinition,
  type SettingType,
  settingDefinitions,
  settingKeys,
} from './schema.js';
export { LogLevel, type SettingKey, type Settings } from './settings.js';
export { redactDb } from './value-schemas.js';
