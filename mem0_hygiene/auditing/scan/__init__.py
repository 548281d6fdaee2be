"""auditing.scan"""
