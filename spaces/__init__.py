"""The mapper: grammar terminals -> scikit-learn / scikit-multilearn estimators."""
