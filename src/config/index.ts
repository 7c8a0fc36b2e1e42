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
  LogLevel,
  MAX_RETENTION_DAYS,
  redactDb,
  type SettingDefinition,
  type SettingKey,
  type Settings,
  type SettingType,
  settingDefinitions,
  settingKeys,
} from './schema.js';
