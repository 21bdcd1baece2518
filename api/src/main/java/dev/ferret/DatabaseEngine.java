package dev.ferret;

/** The database engines Ferret has a dialect for. */
public enum DatabaseEngine {
    SQL_SERVER,
    POSTGRESQL,
    H2
}
