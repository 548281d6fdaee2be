"""auditing"""
