"""Reviewer and submission profiles, affinity scores and conflicts of interest.

Data flows one way: readers (:mod:`recommender.io`) turn files into validated domain
objects (:mod:`recommender.corpus`); profilers turn texts into vectors; affinity turns
vectors into a paper x reviewer score matrix with provenance.
"""
